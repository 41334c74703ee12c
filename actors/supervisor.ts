/**
 * The build-run supervisor: a pure state machine over one run's selected
 * nodes (ready queue, threads, skips, fail-fast, cancellation). `transition(state, message, now)` does no
 * I/O and never reads a clock; it returns the next state and the effects a
 * runtime must apply (dispatch a task, cancel a task's query, emit an event).
 * Task results come back as messages correlated by `(taskId, attempt)`; a
 * result for anything but the node's current running attempt is dropped.
 *
 * Run phases:
 *   idle      created, nothing dispatched. `run.cancel` here only marks the
 *             run cancelling, so `run.start` then skips every node.
 *   running   nodes move through the statuses below until none is left.
 *   finished  every node has a final status; `run.finish` was emitted once;
 *             all later messages are dropped.
 *
 * Node statuses:
 *   pending → ready      every selected dependency finished without error or
 *                        cascading skip (appended to the FIFO ready queue;
 *                        no level barriers)
 *   ready   → running    a worker slot is free and the run is neither halted
 *                        (fail-fast) nor cancelling
 *   running → success    task.completed for the current attempt
 *   running → error      task.failed (unless retried), or any result that
 *                        arrives while cancelling (error `cancelled`)
 *   running → running    task.failed with a retryable error and attempts left
 *   pending/ready → skipped
 *                        a dependency errored or was skipped with cascade; or
 *                        fail-fast tripped; or the run is cancelling; or a
 *                        preset skip (seeds under --no-seeds, which do not
 *                        cascade)
 */
import type { SerializedError } from '../engine/errors.js';
import { EngineError } from '../engine/errors.js';
import type {
  FinalStatus,
  NodeRecord,
  NodeStatus,
  RunCounts,
  RunEffect,
  RunInput,
  RunEvent,
  RunMessage,
  RunResult,
} from './run-protocol.js';
import { Queue, Vec, type QueueDraft, type VecDraft } from './persistent.js';

export const DEFAULT_THREADS = 4;

/** The error recorded for nodes that were in flight when the run was cancelled. */
export const CANCELLED_ERROR: SerializedError = Object.freeze({
  name: 'EngineError',
  code: 'cancelled',
  message: 'cancelled',
  retryable: false,
});

interface PlanNode {
  /** Indexes of selected dependents, ascending (DAG order). */
  readonly dependents: readonly number[];
  readonly presetSkip: boolean;
  readonly cascade: boolean;
}

/** What never changes during a run; shared by every state of it. */
interface Plan {
  readonly nodes: readonly PlanNode[];
  readonly indexOf: ReadonlyMap<string, number>;
  readonly workers: number;
  readonly failFast: boolean;
  readonly maxAttempts: number;
}

export type RunPhase = 'idle' | 'running' | 'finished';

export interface RunState<N, R> {
  readonly phase: RunPhase;
  readonly plan: Plan;
  /** Per node, DAG order (persistent.ts: a transition copies only what it touches). */
  readonly records: Vec<NodeRecord<N, R>>;
  /** Per node: selected dependencies not yet finished. */
  readonly waiting: Vec<number>;
  /** FIFO of node indexes whose status is `ready`. */
  readonly ready: Queue<number>;
  readonly running: number;
  /** Nodes without a final status. */
  readonly remaining: number;
  /** Last progress index handed out. */
  readonly seq: number;
  /** Fail-fast tripped: nothing new starts. */
  readonly halted: boolean;
  readonly cancelling: boolean;
  readonly startedAt: number;
}

export interface Transition<N, R> {
  readonly state: RunState<N, R>;
  readonly effects: readonly RunEffect<N, R>[];
}

/** Builds the idle state of a run; throws an `internal` EngineError on a malformed selection. */
export function createRun<N, R = unknown>(input: RunInput<N>): RunState<N, R> {
  const indexOf = new Map<string, number>();
  input.nodes.forEach((n, i) => {
    if (indexOf.has(n.id)) throw new EngineError('internal', `run input: duplicate node id '${n.id}'`);
    indexOf.set(n.id, i);
  });
  const deps: number[][] = input.nodes.map(() => []);
  const dependents: number[][] = input.nodes.map(() => []);
  input.nodes.forEach((n, i) => {
    for (const d of new Set(n.deps)) {
      const j = indexOf.get(d);
      if (j === undefined) continue; // not selected: not waited for
      if (j >= i) throw new EngineError('internal', `run input: node '${n.id}' depends on '${d}', which does not come before it in DAG order`);
      deps[i].push(j);
      dependents[j].push(i);
    }
  });
  const threads = input.threads > 0 ? Math.floor(input.threads) : DEFAULT_THREADS;
  const plan: Plan = {
    nodes: input.nodes.map((n, i) => ({
      dependents: dependents[i],
      presetSkip: n.presetStatus === 'skipped',
      cascade: n.cascade ?? true,
    })),
    indexOf,
    workers: Math.min(threads, input.nodes.length),
    failFast: input.failFast ?? false,
    maxAttempts: Math.max(1, Math.floor(input.maxAttempts ?? 1)),
  };
  return {
    phase: 'idle',
    plan,
    records: Vec.of(input.nodes.map((n): NodeRecord<N, R> => ({ id: n.id, node: n.node, status: 'pending', attempt: 0, index: 0, durationMs: 0 }))),
    waiting: Vec.of(deps.map((d) => d.length)),
    ready: Queue.empty(),
    running: 0,
    remaining: input.nodes.length,
    seq: 0,
    halted: false,
    cancelling: false,
    startedAt: 0,
  };
}

/** Number of worker slots the run uses: min(threads, selected nodes). */
export const workersOf = (state: RunState<unknown, unknown>): number => state.plan.workers;

export function transition<N, R>(state: RunState<N, R>, message: RunMessage<R>, now: number): Transition<N, R> {
  if (state.phase === 'finished') return { state, effects: [] };
  switch (message.type) {
    case 'run.start': {
      if (state.phase !== 'idle') return { state, effects: [] };
      const d = new Draft(state, now);
      d.start();
      return d.done();
    }
    case 'run.cancel': {
      if (state.cancelling) return { state, effects: [] };
      if (state.phase === 'idle') return { state: { ...state, cancelling: true }, effects: [] };
      const d = new Draft(state, now);
      d.cancel();
      return d.done();
    }
    case 'task.completed':
    case 'task.failed': {
      const i = state.plan.indexOf.get(message.taskId);
      if (i === undefined) return { state, effects: [] };
      const rec = state.records.at(i);
      if (rec.status !== 'running' || rec.attempt !== message.attempt) return { state, effects: [] }; // late or superseded
      const d = new Draft(state, now);
      if (message.type === 'task.completed') d.taskDone(i, message.result, undefined);
      else d.taskDone(i, undefined, message.error);
      return d.done();
    }
  }
}

/**
 * One transition's working copy: drafts of the state's persistent arrays
 * (persistent.ts), mutated locally and turned into the next state by
 * `done()`. The input state is never touched.
 */
class Draft<N, R> {
  readonly #plan: Plan;
  readonly #now: number;
  #phase: RunPhase;
  readonly #records: VecDraft<NodeRecord<N, R>>;
  readonly #waiting: VecDraft<number>;
  readonly #ready: QueueDraft<number>;
  #running: number;
  #remaining: number;
  #seq: number;
  #halted: boolean;
  #cancelling: boolean;
  #startedAt: number;
  readonly #effects: RunEffect<N, R>[] = [];

  constructor(s: RunState<N, R>, now: number) {
    this.#plan = s.plan;
    this.#now = now;
    this.#phase = s.phase;
    this.#records = s.records.edit();
    this.#waiting = s.waiting.edit();
    this.#ready = s.ready.edit();
    this.#running = s.running;
    this.#remaining = s.remaining;
    this.#seq = s.seq;
    this.#halted = s.halted;
    this.#cancelling = s.cancelling;
    this.#startedAt = s.startedAt;
  }

  start(): void {
    this.#phase = 'running';
    this.#startedAt = this.#now;
    if (this.#cancelling) {
      this.#skipNotStarted();
    } else {
      // Preset skips first, without enqueueing, so that the initial ready
      // queue is built by one scan in DAG order.
      this.#plan.nodes.forEach((p, i) => {
        if (p.presetSkip && this.#records.at(i).status === 'pending') this.#settle(i, 'skipped', undefined, undefined, p.cascade, false);
      });
      for (let i = 0; i < this.#records.length; i++) {
        if (this.#records.at(i).status === 'pending' && this.#waiting.at(i) === 0) this.#enqueue(i);
      }
      this.#pump();
    }
    this.#finishIfDone();
  }

  cancel(): void {
    this.#cancelling = true;
    this.#emit({ type: 'run.cancelling', running: this.#running });
    for (let i = 0; i < this.#records.length; i++) {
      const r = this.#records.at(i);
      if (r.status === 'running') this.#effects.push({ type: 'cancel.task', taskId: r.id, attempt: r.attempt });
    }
    this.#skipNotStarted();
    this.#finishIfDone();
  }

  taskDone(i: number, result: R | undefined, error: SerializedError | undefined): void {
    const rec = this.#records.at(i);
    if (this.#cancelling) {
      this.#running--;
      this.#settle(i, 'error', undefined, CANCELLED_ERROR, true, true);
    } else if (error === undefined) {
      this.#running--;
      this.#settle(i, 'success', result, undefined, true, true);
    } else if (error.retryable && rec.attempt < this.#plan.maxAttempts && !this.#halted) {
      this.#retry(i, error);
    } else {
      this.#running--;
      this.#settle(i, 'error', undefined, error, true, true);
      if (this.#plan.failFast && !this.#halted) {
        this.#halted = true;
        this.#skipNotStarted();
      }
    }
    this.#pump();
    this.#finishIfDone();
  }

  done(): Transition<N, R> {
    const state: RunState<N, R> = {
      phase: this.#phase,
      plan: this.#plan,
      records: this.#records.done(),
      waiting: this.#waiting.done(),
      ready: this.#ready.done(),
      running: this.#running,
      remaining: this.#remaining,
      seq: this.#seq,
      halted: this.#halted,
      cancelling: this.#cancelling,
      startedAt: this.#startedAt,
    };
    return { state, effects: this.#effects };
  }

  #emit(event: RunEvent<N, R>): void {
    this.#effects.push({ type: 'emit', event });
  }

  #enqueue(i: number): void {
    this.#records.set(i, { ...this.#records.at(i), status: 'ready' });
    this.#ready.push(i);
  }

  /** Starts ready nodes in FIFO order while worker slots are free. */
  #pump(): void {
    if (this.#halted || this.#cancelling) return;
    while (this.#ready.size > 0 && this.#running < this.#plan.workers) {
      const i = this.#ready.shift()!;
      this.#running++;
      this.#dispatch(i, { ...this.#records.at(i), index: ++this.#seq, startedAt: this.#now });
    }
  }

  #retry(i: number, error: SerializedError): void {
    const rec = this.#records.at(i);
    this.#emit({ type: 'node.retry', id: rec.id, node: rec.node, attempt: rec.attempt + 1, error });
    this.#dispatch(i, rec);
  }

  #dispatch(i: number, base: NodeRecord<N, R>): void {
    const rec: NodeRecord<N, R> = { ...base, status: 'running', attempt: base.attempt + 1 };
    this.#records.set(i, rec);
    this.#emit({
      type: 'node.start',
      id: rec.id,
      node: rec.node,
      index: rec.index,
      total: this.#records.length,
      attempt: rec.attempt,
      at: this.#now,
    });
    this.#effects.push({ type: 'dispatch', taskId: rec.id, attempt: rec.attempt, node: rec.node });
  }

  /**
   * Gives node `i` its final status and settles what follows from it: an
   * error or a cascading skip skips every pending dependent transitively (in
   * DAG order); anything else counts down dependents, appending those that
   * reach zero to the ready queue when `enqueue` is set.
   */
  #settle(i: number, status: FinalStatus, result: R | undefined, error: SerializedError | undefined, cascade: boolean, enqueue: boolean): void {
    this.#finalize(i, status, result, error);
    const skipsDependents = status === 'error' || (status === 'skipped' && cascade);
    if (!skipsDependents) {
      for (const j of this.#plan.nodes[i].dependents) {
        if (this.#records.at(j).status !== 'pending') continue;
        const waiting = this.#waiting.at(j) - 1;
        this.#waiting.set(j, waiting);
        if (waiting === 0 && enqueue) this.#enqueue(j);
      }
      return;
    }
    const doomed = new Set<number>();
    const stack = [i];
    while (stack.length > 0) {
      for (const j of this.#plan.nodes[stack.pop()!].dependents) {
        if (this.#records.at(j).status === 'pending' && !doomed.has(j)) {
          doomed.add(j);
          stack.push(j);
        }
      }
    }
    for (const j of [...doomed].sort((a, b) => a - b)) this.#finalize(j, 'skipped', undefined, undefined);
  }

  #finalize(i: number, status: FinalStatus, result: R | undefined, error: SerializedError | undefined): void {
    const prev = this.#records.at(i);
    const ran = prev.status === 'running';
    const rec: NodeRecord<N, R> = {
      id: prev.id,
      node: prev.node,
      status,
      attempt: prev.attempt,
      index: prev.index === 0 ? ++this.#seq : prev.index,
      ...(ran && prev.startedAt !== undefined ? { startedAt: prev.startedAt } : {}),
      durationMs: ran && prev.startedAt !== undefined ? this.#now - prev.startedAt : 0,
      ...(result !== undefined ? { result } : {}),
      ...(error !== undefined ? { error } : {}),
    };
    this.#records.set(i, rec);
    this.#remaining--;
    this.#emit({ ...rec, type: 'node.finish', status, total: this.#records.length });
  }

  /** Fail-fast and cancellation: every node that never started is skipped. */
  #skipNotStarted(): void {
    for (let i = 0; i < this.#records.length; i++) {
      const status = this.#records.at(i).status;
      if (status === 'pending' || status === 'ready') this.#finalize(i, 'skipped', undefined, undefined);
    }
    this.#ready.clear();
  }

  #finishIfDone(): void {
    if (this.#phase !== 'running' || this.#remaining > 0) return;
    this.#phase = 'finished';
    const counts: Record<FinalStatus, number> = { success: 0, error: 0, skipped: 0 };
    const records = this.#records.done().toArray();
    for (const r of records) counts[r.status as FinalStatus]++;
    const result: RunResult<N, R> = {
      records,
      counts: counts satisfies RunCounts,
      durationMs: this.#now - this.#startedAt,
      cancelled: this.#cancelling,
    };
    this.#emit({ type: 'run.finish', result });
  }
}

/** Status of one node by id (undefined if not in the run). */
export function statusOf(state: RunState<unknown, unknown>, id: string): NodeStatus | undefined {
  const i = state.plan.indexOf.get(id);
  return i === undefined ? undefined : state.records.at(i).status;
}
