/**
 * The task pool: Piscina worker threads running the handlers of
 * `actors/pool-tasks/`. A task is plain data (`{type, ...}`); its result is plain
 * data or a rejection with an EngineError rebuilt from the worker's
 * serialized error (same code, same message chain).
 *
 * Cancellation never terminates a thread (a killed thread leaves database
 * sessions and transactions dangling): `run(task, {signal})` forwards an
 * abort as a cancel notice on a per-pool BroadcastChannel, the handler sees
 * its own AbortSignal fire, asks its database to stop, and fails with a
 * `cancelled` error. That is also why Piscina's `signal` option is not used.
 *
 * The worker file is resolved next to this module, so the pool runs from the
 * compiled `dist/actors/worker-entry.js` and, under tsx, from
 * `actors/worker-entry.ts` (worker threads inherit `--import tsx` from the
 * parent's execArgv; it is added when the parent got tsx another way).
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { EngineError } from '../engine/errors.js';
import { poolExecArgv } from '../engine/threads/module-pool.js';
import type { ChannelMessage, PoolWorkerData, TaskEnvelope, TaskOutcome } from './pool-protocol.js';
import { rebuildError } from './task-error.js';
import { expectLines } from './log-receiver.js';
import type { PoolTask, Task, TaskResult, TaskType } from './pool-tasks/index.js';
import type { LogRoute } from './pool-tasks/forwarding-logger.js';

export interface TaskPoolOptions {
  /** Upper bound of worker threads (Piscina's default: 1.5 × available parallelism). */
  readonly maxThreads?: number;
  readonly minThreads?: number;
  /** Milliseconds an idle thread lives before it is stopped. */
  readonly idleTimeout?: number;
  /**
   * Tasks one thread runs at once (default 1). Database tasks mostly wait on
   * the server, so a few threads with several tasks each serve many slots
   * without a thread (and its start-up, memory and CPU) per slot.
   */
  readonly concurrentTasksPerWorker?: number;
  /**
   * Task types the pool will run first: each thread loads their handlers
   * while it waits for work (handlers otherwise load on a thread's first
   * task of their type — the build handler's modules take a few hundred ms).
   */
  readonly preload?: readonly TaskType[];
  /** Pool-level failures not tied to one task (a worker that died). Defaults to a process warning. */
  readonly onError?: (err: Error) => void;
  /**
   * Linux: the nice value each worker gives its own thread (and so the
   * threads it starts, e.g. DuckDB's) — background work that yields the CPU
   * to the thread serving requests. Default: setWorkerNiceness's, 0 unless
   * the process set one (the daemon does; the CLI's runs do not).
   */
  readonly niceness?: number;
}

let defaultNiceness = 0;

/**
 * The nice value of worker threads of pools created from now on without
 * their own (`service serve` sets it once at start, before any pool, for
 * the execution pool and the DuckDB actors' threads). Linux only: elsewhere
 * a thread cannot have its own priority, and the value is ignored.
 */
export function setWorkerNiceness(niceness: number): void {
  defaultNiceness = niceness;
}

export interface RunTaskOptions {
  /** Aborting it cancels the task cooperatively (see the module header). */
  readonly signal?: AbortSignal;
}

const ENTRY_IS_TS = import.meta.url.endsWith('.ts');

export class TaskPool {
  readonly #piscina: Piscina<TaskEnvelope, TaskOutcome>;
  readonly #cancel: BroadcastChannel;
  /** Tasks aborted but not settled: their cancels are posted again when a worker reports ready. */
  readonly #aborted = new Set<number>();
  #nextId = 1;
  #destroyed = false;

  constructor(options: TaskPoolOptions = {}) {
    const cancelChannel = `service-task-cancel-${randomUUID()}`;
    const concurrentTasks = Math.max(1, options.concurrentTasksPerWorker ?? 1);
    const workerData: PoolWorkerData = { cancelChannel, concurrentTasks, preload: options.preload ?? [], niceness: options.niceness ?? defaultNiceness };
    const execArgv = poolExecArgv(import.meta.url);
    this.#piscina = new Piscina<TaskEnvelope, TaskOutcome>({
      filename: new URL(ENTRY_IS_TS ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href,
      workerData,
      // Workers keep handles open between tasks (database connections, the cancel and
      // log channels): 'sync' atomics would freeze their event loops while idle.
      atomics: 'disabled',
      // No run/wait-time histograms: nothing reads them, and they cost every task a few samples.
      recordTiming: false,
      ...(execArgv ? { execArgv } : {}),
      ...(options.maxThreads !== undefined ? { maxThreads: options.maxThreads } : {}),
      ...(options.minThreads !== undefined ? { minThreads: options.minThreads } : {}),
      ...(options.idleTimeout !== undefined ? { idleTimeout: options.idleTimeout } : {}),
      concurrentTasksPerWorker: concurrentTasks,
    });
    const onError = options.onError ?? ((err: Error) => process.emitWarning(err, { code: 'SERVICE_POOL' }));
    this.#piscina.on('error', (err: Error) => {
      // destroy() rejects the tasks in flight at once; their workers' answers can still arrive
      // while the threads stop, and Piscina reports each as unexpected. The caller has already
      // been told why the pool stopped (a connect error, say), so they are noise, not failures.
      if (this.#destroyed && err.message.startsWith('Unexpected message from Worker')) return;
      onError(err);
    });
    this.#cancel = new BroadcastChannel(cancelChannel);
    this.#cancel.unref();
    this.#cancel.onmessage = (event: unknown) => {
      const m = (event as { data: ChannelMessage }).data;
      if (m?.type === 'worker.ready') for (const taskId of this.#aborted) this.#post({ type: 'task.cancel', taskId });
    };
  }

  get maxThreads(): number {
    return this.#piscina.maxThreads;
  }

  /** Ids of the worker threads alive now (health checks, tests proving threads survive cancellation). */
  threadIds(): number[] {
    return this.#piscina.threads.map((w) => w.threadId);
  }

  /** Runs `task` on a worker thread. Rejects with an EngineError (code from the worker) on failure. */
  run<T extends Task>(task: T, options?: RunTaskOptions): Promise<TaskResult<T>>;
  run(task: PoolTask, options?: RunTaskOptions): Promise<unknown>;
  async run(task: PoolTask, options: RunTaskOptions = {}): Promise<unknown> {
    if (this.#destroyed) throw new EngineError('internal', `worker pool: cannot run task '${task.type}' after shutdown`);
    const { signal } = options;
    if (signal?.aborted) throw new EngineError('cancelled', 'cancelled');
    const taskId = this.#nextId++;
    const onAbort = () => {
      this.#aborted.add(taskId);
      this.#post({ type: 'task.cancel', taskId });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: TaskOutcome;
    try {
      outcome = await this.#piscina.run({ taskId, task });
    } catch (err) {
      throw new EngineError('internal', `worker pool: task '${task.type}' did not complete`, err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#aborted.delete(taskId);
    }
    const route = (task as { log?: LogRoute }).log;
    if (route) expectLines(route, outcome.logLines ?? 0);
    if (!outcome.ok) throw rebuildError(outcome.error);
    return outcome.value;
  }

  #post(message: ChannelMessage): void {
    if (!this.#destroyed) this.#cancel.postMessage(message);
  }

  /** Stops every worker thread; tasks still queued or running are rejected. Idempotent. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#cancel.close();
    await this.#piscina.destroy();
  }
}
