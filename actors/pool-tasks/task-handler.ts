/**
 * The contract between the worker entry and the code that does a task's
 * work. A task is plain serialisable data with a `type`; its handler returns
 * plain serialisable data or throws (an EngineError with a code, ideally).
 * Handlers run on a worker thread: they may import `engine/` but never
 * `http/` or `cli/`, and they must not assume which thread they land on.
 */

export interface PoolTask {
  readonly type: string;
}

export interface TaskContext {
  /** Pool-wide id of this task run; ids are never reused. */
  readonly taskId: number;
  /**
   * Aborted when the task is cancelled. The thread is never killed: a handler
   * that talks to a database asks it to stop (`pg_cancel_backend`,
   * `connection.interrupt()`) and then fails with a `cancelled` error.
   */
  readonly signal: AbortSignal;
}

export type TaskHandler<T extends PoolTask, R> = (task: T, context: TaskContext) => Promise<R>;
