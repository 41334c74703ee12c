/**
 * What the main thread and a pool worker exchange. Piscina carries the task
 * envelope in and the outcome out; cancellation travels separately on a
 * BroadcastChannel named per pool, because Piscina's own abort terminates the
 * worker thread, and with it every other task and connection it holds. Handler errors come back as data
 * in the outcome (never as a Piscina rejection), so their code and retry hint
 * survive the structured clone.
 */
import type { SerializedError } from '../engine/errors.js';
import type { PoolTask } from './pool-tasks/task-handler.js';

export interface TaskEnvelope {
  readonly taskId: number;
  readonly task: PoolTask;
}

/**
 * `logLines`: how many lines the task posted on its log route (tasks that
 * carry one), so the host knows when it has them all (actors/log-receiver.ts).
 */
export type TaskOutcome =
  | { readonly ok: true; readonly value: unknown; readonly logLines?: number }
  | { readonly ok: false; readonly error: SerializedError; readonly logLines?: number };

export interface CancelNotice {
  readonly type: 'task.cancel';
  readonly taskId: number;
}

/**
 * A worker posts this once, as soon as it listens on the cancel channel. A
 * BroadcastChannel only reaches instances that exist, so a cancel posted
 * while a worker thread was still booting is lost; the pool answers
 * `worker.ready` by posting the cancels of every task still aborted again.
 * (Once per worker, not once per task: a per-task notice cost every thread a
 * message per task.)
 */
export interface ReadyNotice {
  readonly type: 'worker.ready';
}

export type ChannelMessage = CancelNotice | ReadyNotice;

/** Piscina `workerData` for our workers. */
export interface PoolWorkerData {
  readonly cancelChannel: string;
  /** Tasks one worker runs at once (Piscina's concurrentTasksPerWorker): its connection pools hold as many. */
  readonly concurrentTasks: number;
  /** Task types whose handlers a worker loads as soon as it starts, before its first task of them arrives. */
  readonly preload: readonly string[];
  /** Linux nice value the worker gives its own thread at start (0: unchanged); see TaskPoolOptions.niceness. */
  readonly niceness: number;
}
