/**
 * The CLI's logger: stderr, level from --debug/--trace, `SERVICE_LOGGING=JSON`
 * for JSON lines. `write` is the command's stderr (the Io's
 * `err`), so in-process callers and tests see the warnings it prints.
 */
import { streamLogger, type Level, type Logger } from '../engine/log.js';
import { processIo, stderrLogLines } from './io.js';

/**
 * Colours only for a person at a terminal: stderr is a TTY, the lines go to
 * the process's own stderr (not captured by a caller), and NO_COLOR is not
 * set to a non-empty value (https://no-color.org).
 */
export function wantsColor(write: ((line: string) => void) | undefined, isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  return isTTY && (write === undefined || write === processIo.err) && (env.NO_COLOR ?? '') === '';
}

export function cliLogger(opts: { debug?: boolean; trace?: boolean }, write?: (line: string) => void): Logger {
  const level: Level = opts.trace ? 'trace' : opts.debug ? 'debug' : 'info';
  const json = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  const color = !json && wantsColor(write, process.stderr.isTTY === true, process.env);
  if (write !== undefined && write !== processIo.err) return streamLogger({ level, json, write, color });
  const lines = stderrLogLines();
  return streamLogger({ level, json, write: (line) => lines.write(line), color });
}
