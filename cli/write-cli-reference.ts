/** `npm run docs:cli`: rewrites docs/cli.md from the commands' help texts. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliReference } from './cli-reference.js';

writeFileSync(join(import.meta.dirname, '..', 'docs', 'cli.md'), cliReference());
