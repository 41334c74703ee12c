/**
 * A Piscina pool running the default export of one module of ours (its
 * `.ts` source under tsx, the compiled `.js` from dist/): the thread
 * mechanism of every worker whose caller can await (the state store's
 * readers, the file writer; the task pool of actors/pool.ts loads its entry
 * the same way). A pool of one where a resource needs a single owner.
 * Threads a synchronous caller must wait on are BlockingThreads instead
 * (blocking-thread.ts says why Piscina cannot serve them).
 */
import { Piscina } from 'piscina';
import { nearModule } from '../lazy-import.js';

export interface ModulePoolOptions {
  /** Threads started at once and kept (default: all of maxThreads). */
  readonly minThreads?: number;
  readonly maxThreads: number;
  /** Tasks one thread runs at once (its handler is async and mostly waits). */
  readonly concurrentTasksPerWorker?: number;
  /** The module reads it as `workerData` from 'piscina'. */
  readonly workerData?: unknown;
  /** A thread's failure not tied to a task (default: a process warning; never an uncaught 'error' event). */
  readonly onError?: (err: Error) => void;
}

/** `node` flags of a pool's threads (undefined: inherit): under tsx, tsx's own when the parent got it another way. */
export function poolExecArgv(base: string): string[] | undefined {
  if (!base.endsWith('.ts')) return undefined; // inherit
  return process.execArgv.some((a) => a.includes('tsx')) ? undefined : [...process.execArgv, '--import', 'tsx'];
}

export function modulePool<Task, Result>(base: string, specifier: string, options: ModulePoolOptions): Piscina<Task, Result> {
  const argv = poolExecArgv(base);
  const pool = new Piscina<Task, Result>({
    filename: nearModule(base, specifier).href,
    minThreads: options.minThreads ?? options.maxThreads,
    maxThreads: options.maxThreads,
    concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? 1,
    // The threads keep handles between tasks (a database, pending fsyncs): 'sync' atomics would freeze their event loops while idle.
    atomics: 'disabled',
    recordTiming: false,
    // An idle thread above minThreads is not kept.
    idleTimeout: 0,
    ...(options.workerData !== undefined ? { workerData: options.workerData } : {}),
    ...(argv ? { execArgv: argv } : {}),
  });
  pool.on('error', options.onError ?? ((err: Error) => process.emitWarning(err, { code: 'SERVICE_THREAD' })));
  return pool;
}
