/** The help of `service build` and its commands (rendered from the command table). */
import { helpText } from '../command-help.js';
import type { BuildCommand } from './args.js';

export const buildHelp = (): string => helpText('build');
export const commandHelp = (command: BuildCommand): string => helpText(`build ${command}`);
