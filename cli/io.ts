/**
 * Where the CLI writes, and how it reports a failure:
 * `fatal: <error chain>` and exit 1, or for usage errors `error: <message>`,
 * the usage hint and exit 2.
 */
import { EngineError, errorChain } from '../engine/errors.js';
import { batchedWriter, type BatchedWriter } from '../engine/log.js';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

let logLines: BatchedWriter | undefined;

/**
 * Log lines bound for this process's own stderr, written once per
 * event-loop turn: a run logs two lines per node, and stderr writes to a
 * pipe or a file are synchronous system calls. Whatever else the CLI prints
 * flushes them first, so the order stays as written.
 */
export function stderrLogLines(): BatchedWriter {
  return (logLines ??= batchedWriter((t) => process.stderr.write(t)));
}

export const processIo: Io = {
  out: (t) => {
    logLines?.flush();
    process.stdout.write(t);
  },
  err: (t) => {
    logLines?.flush();
    process.stderr.write(t);
  },
};

/** `error: <message>` and the hint naming the help of `topic` (`build run`, `jobs`, or '' for the program); exit 2. */
export function printUsageError(message: string, topic: string, io: Io): number {
  io.err(`error: ${message}\nRun 'service${topic ? ` ${topic}` : ''} --help' for usage.\n`);
  return 2;
}

/** Prints `fatal: …` (several errors joined by `; `, each under its prefix) and returns the exit code. */
export function printFatal(err: unknown, io: Io, prefixes?: readonly string[], topic = ''): number {
  const list = Array.isArray(err) ? err : [err];
  if (list.length === 1 && list[0] instanceof EngineError && list[0].code === 'usage' && !prefixes) return printUsageError(list[0].message, topic, io);
  const text = list.map((e, i) => (prefixes?.[i] ? `${prefixes[i]}: ${errorChain(e)}` : errorChain(e))).join('; ');
  io.err(`fatal: ${text}\n`);
  return 1;
}
