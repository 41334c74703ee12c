/**
 * The data a build run's supervisor exchanges with the world: what it is
 * given (input), what it receives (messages), what it asks for (effects) and
 * what it tells (events), plus the per-node records it ends with. Everything
 * here is plain JSON-safe data (given JSON-safe node and result payloads), so
 * a message can come from a worker thread, an HTTP handler or a test alike.
 *
 * `N` is the node payload the executor needs (a compiled model, a seed, a
 * test plan); `R` is what a finished task returns (rows, bytes, warnings).
 * The supervisor never looks inside either.
 */
import type { SerializedError } from '../engine/errors.js';

export type NodeStatus = 'pending' | 'ready' | 'running' | 'success' | 'error' | 'skipped';
export type FinalStatus = 'success' | 'error' | 'skipped';

export interface RunNodeInput<N> {
  /** Unique within the run; doubles as the task id. */
  readonly id: string;
  /** Ids of the nodes this one depends on; ids outside the selection are ignored. */
  readonly deps: readonly string[];
  readonly node: N;
  /** Report the node as skipped without running it (seeds under --no-seeds or `test`). */
  readonly presetStatus?: 'skipped';
  /** With `presetStatus`: whether dependents are skipped too. Defaults to true; seeds use false. */
  readonly cascade?: boolean;
}

export interface RunInput<N> {
  /** Selected nodes in DAG order: every dependency comes before its dependents. */
  readonly nodes: readonly RunNodeInput<N>[];
  /** Requested concurrency; ≤ 0 means the default of 4. */
  readonly threads: number;
  /** -x/--fail-fast. */
  readonly failFast?: boolean;
  /** Attempts per node for errors marked `retryable`; 1 (the default) never retries. */
  readonly maxAttempts?: number;
}

export interface NodeRecord<N, R> {
  readonly id: string;
  readonly node: N;
  readonly status: NodeStatus;
  /** 0 until first dispatched; each dispatch increments it. */
  readonly attempt: number;
  /** 1-based position in dispatch/skip order (the `<i>` of progress lines); 0 until started or skipped. */
  readonly index: number;
  /** Clock time of the first dispatch, when it ran. */
  readonly startedAt?: number;
  /** Time from first dispatch to the final result; 0 for skipped nodes. */
  readonly durationMs: number;
  readonly result?: R;
  readonly error?: SerializedError;
}

export interface RunCounts {
  readonly success: number;
  readonly error: number;
  readonly skipped: number;
}

export interface RunResult<N, R> {
  /** One record per node, in DAG order, every status final. */
  readonly records: readonly NodeRecord<N, R>[];
  readonly counts: RunCounts;
  readonly durationMs: number;
  readonly cancelled: boolean;
}

// ── messages (in) ────────────────────────────────────────────────────────────

export interface RunStartMessage {
  readonly type: 'run.start';
}
export interface TaskCompletedMessage<R> {
  readonly type: 'task.completed';
  readonly taskId: string;
  readonly attempt: number;
  readonly result: R;
}
export interface TaskFailedMessage {
  readonly type: 'task.failed';
  readonly taskId: string;
  readonly attempt: number;
  readonly error: SerializedError;
}
export interface RunCancelMessage {
  readonly type: 'run.cancel';
}

export type RunMessage<R> = RunStartMessage | TaskCompletedMessage<R> | TaskFailedMessage | RunCancelMessage;

// ── events (out, for progress lines, logs and live feeds) ───────────────────

export interface NodeStartEvent<N> {
  readonly type: 'node.start';
  readonly id: string;
  readonly node: N;
  readonly index: number;
  readonly total: number;
  readonly attempt: number;
  readonly at: number;
}
export interface NodeRetryEvent<N> {
  readonly type: 'node.retry';
  readonly id: string;
  readonly node: N;
  /** The attempt being dispatched now. */
  readonly attempt: number;
  /** Why the previous attempt failed. */
  readonly error: SerializedError;
}
export type NodeFinishEvent<N, R> = NodeRecord<N, R> & {
  readonly type: 'node.finish';
  readonly status: FinalStatus;
  readonly total: number;
};
export interface RunCancellingEvent {
  readonly type: 'run.cancelling';
  /** Nodes in flight whose database work is being stopped (`interrupted: cancelling <k> running node(s)`). */
  readonly running: number;
}
export interface RunFinishEvent<N, R> {
  readonly type: 'run.finish';
  readonly result: RunResult<N, R>;
}

export type RunEvent<N, R> =
  | NodeStartEvent<N>
  | NodeRetryEvent<N>
  | NodeFinishEvent<N, R>
  | RunCancellingEvent
  | RunFinishEvent<N, R>;

// ── effects (out, applied by the runtime) ────────────────────────────────────

export interface DispatchEffect<N> {
  readonly type: 'dispatch';
  readonly taskId: string;
  readonly attempt: number;
  readonly node: N;
}
/** Ask the database to stop this attempt's query; its result still arrives as a message. */
export interface CancelTaskEffect {
  readonly type: 'cancel.task';
  readonly taskId: string;
  readonly attempt: number;
}
export interface EmitEffect<N, R> {
  readonly type: 'emit';
  readonly event: RunEvent<N, R>;
}

export type RunEffect<N, R> = DispatchEffect<N> | CancelTaskEffect | EmitEffect<N, R>;
