/**
 * The CLI's logger: stderr, level from --debug/--trace, `SERVICE_LOGGING=JSON`
 * for JSON lines (build.md §14.5).
 */
import { streamLogger, type Level, type Logger } from '../engine/log.js';

export function cliLogger(opts: { debug?: boolean; trace?: boolean }): Logger {
  const level: Level = opts.trace ? 'trace' : opts.debug ? 'debug' : 'info';
  const json = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  return streamLogger({ level, json });
}
