/**
 * What the main thread and a pool worker exchange. Piscina carries the task
 * envelope in and the outcome out; cancellation travels separately on a
 * BroadcastChannel named per pool, because Piscina's own abort terminates the
 * worker thread, which DESIGN.md rules out. Handler errors come back as data
 * in the outcome (never as a Piscina rejection), so their code and retry hint
 * survive the structured clone.
 */
import type { SerializedError } from '../engine/errors.js';
import type { PoolTask } from './tasks/task-handler.js';

export interface TaskEnvelope {
  readonly taskId: number;
  readonly task: PoolTask;
}

export type TaskOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: SerializedError };

export interface CancelNotice {
  readonly type: 'task.cancel';
  readonly taskId: number;
}

/**
 * A worker posts this when a task starts. A BroadcastChannel only reaches
 * instances that exist, so a cancel posted while a worker thread was still
 * booting is lost; the pool answers `task.started` for a task it already
 * aborted with the cancel again.
 */
export interface StartedNotice {
  readonly type: 'task.started';
  readonly taskId: number;
}

export type ChannelMessage = CancelNotice | StartedNotice;

/** Piscina `workerData` for our workers. */
export interface PoolWorkerData {
  readonly cancelChannel: string;
}
