/**
 * The CLI's logger: stderr, level from --debug/--trace, `SERVICE_LOGGING=JSON`
 * for JSON lines. `write` is the command's stderr (the Io's
 * `err`), so in-process callers and tests see the warnings it prints.
 */
import { streamLogger, type Level, type Logger } from '../engine/log.js';

export function cliLogger(opts: { debug?: boolean; trace?: boolean }, write?: (line: string) => void): Logger {
  const level: Level = opts.trace ? 'trace' : opts.debug ? 'debug' : 'info';
  const json = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  return streamLogger({ level, json, write });
}
