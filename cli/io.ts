/**
 * Where the CLI writes, and how it reports a failure:
 * `fatal: <error chain>` and exit 1, or for usage errors `error: <message>`,
 * the usage hint and exit 2.
 */
import { EngineError, errorChain } from '../engine/errors.js';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/**
 * The process's stdout and stderr, written once per event-loop turn: the
 * texts of one turn are joined per stream, in the order they were written
 * (a run of stdout texts, then a run of stderr texts, …), so a reader of
 * both streams sees the same interleaving as with a write per text.
 * Writes to pipes and files are synchronous system calls on Linux, and
 * `build run` prints two lines per node: a 1,000-model run spent ≈0.27 s of
 * its main thread's CPU in those writes (profiled, output to a pipe), where
 * a write per turn costs a few ms. Queued text is written at `setImmediate`
 * and on process exit (an uncaught exception included).
 */
function turnWriter(): Io {
  let queued: { readonly err: boolean; readonly text: string }[] = [];
  const flush = () => {
    const batch = queued;
    queued = [];
    let i = 0;
    while (i < batch.length) {
      const err = batch[i]!.err;
      let text = '';
      for (; i < batch.length && batch[i]!.err === err; i++) text += batch[i]!.text;
      (err ? process.stderr : process.stdout).write(text);
    }
  };
  process.on('exit', flush);
  const write = (err: boolean, text: string) => {
    if (queued.length === 0) setImmediate(flush);
    queued.push({ err, text });
  };
  return { out: (t) => write(false, t), err: (t) => write(true, t) };
}

export const processIo: Io = turnWriter();

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
