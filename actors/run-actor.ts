/**
 * The effect runner for one build run: it owns the supervisor's state, feeds
 * it messages through a run-to-completion mailbox, and applies the effects it
 * returns — calling the executor for `dispatch`, the canceller for
 * `cancel.task`, and the event emitter for `emit`. Task outcomes come back as
 * `task.completed` / `task.failed` messages, so all decisions stay in the
 * pure `transition`.
 *
 * The executor decides where work runs (the Piscina pool, a DuckDB actor, an
 * in-process function); the runtime only needs a promise per task. A thrown
 * error becomes a `task.failed` with the error serialized as it would be when
 * crossing a thread.
 */
import { EventEmitter } from 'eventemitter3';
import type { SerializedError } from '../engine/errors.js';
import { EngineError, serializeError } from '../engine/errors.js';
import { Mailbox } from './mailbox.js';
import type {
  NodeFinishEvent,
  NodeRetryEvent,
  NodeStartEvent,
  RunCancellingEvent,
  RunEffect,
  RunInput,
  RunMessage,
  RunResult,
} from './run-protocol.js';
import type { RunState } from './supervisor.js';
import { createRun, transition } from './supervisor.js';
import { isRetryable } from './task-error.js';

export interface TaskRequest<N> {
  readonly taskId: string;
  readonly attempt: number;
  readonly node: N;
}

export type Executor<N, R> = (task: TaskRequest<N>) => Promise<R>;

/** Asks whatever runs `taskId` to stop its database work; the task then settles (usually with an error). */
export type Canceller = (task: { readonly taskId: string; readonly attempt: number }) => void | Promise<void>;

export interface CancelFailedEvent {
  readonly taskId: string;
  readonly attempt: number;
  readonly error: SerializedError;
}

export interface RunEvents<N, R> {
  'node.start': (event: NodeStartEvent<N>) => void;
  'node.retry': (event: NodeRetryEvent<N>) => void;
  'node.finish': (event: NodeFinishEvent<N, R>) => void;
  'run.cancelling': (event: RunCancellingEvent) => void;
  'run.finish': (event: { readonly type: 'run.finish'; readonly result: RunResult<N, R> }) => void;
  /** A canceller threw or rejected; the task itself still settles on its own. */
  'cancel.failed': (event: CancelFailedEvent) => void;
}

export interface RunOptions<N, R> {
  readonly execute: Executor<N, R>;
  readonly cancel?: Canceller;
  /** Milliseconds; monotonic by default. Tests inject their own. */
  readonly now?: () => number;
}

export class RunActor<N, R> {
  readonly events = new EventEmitter<RunEvents<N, R>>();
  /** Resolves with the final records once every node has a final status. */
  readonly done: Promise<RunResult<N, R>>;

  #state: RunState<N, R>;
  readonly #mailbox: Mailbox<RunMessage<R>>;
  readonly #execute: Executor<N, R>;
  readonly #cancel: Canceller | undefined;
  readonly #now: () => number;
  #resolve!: (result: RunResult<N, R>) => void;
  #reject!: (err: unknown) => void;
  /** First failure of our own machinery (a listener that threw); reported when the run ends. */
  #fault: unknown;

  constructor(input: RunInput<N>, options: RunOptions<N, R>) {
    this.#state = createRun<N, R>(input);
    this.#execute = options.execute;
    this.#cancel = options.cancel;
    this.#now = options.now ?? (() => performance.now());
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#mailbox = new Mailbox<RunMessage<R>>(
      (m) => this.#handle(m),
      (err) => this.#noteFault(err),
    );
  }

  /** The supervisor's current state (read-only snapshot). */
  get state(): RunState<N, R> {
    return this.#state;
  }

  /** Starts dispatching; returns `done`. Attach listeners before calling it. */
  start(): Promise<RunResult<N, R>> {
    this.#mailbox.post({ type: 'run.start' });
    return this.done;
  }

  /** Stops dispatching and asks running tasks to stop (SIGINT/SIGTERM, API cancel). Idempotent. */
  cancel(): void {
    this.#mailbox.post({ type: 'run.cancel' });
  }

  /** Delivers a message from outside (e.g. a result relayed from elsewhere). */
  send(message: RunMessage<R>): void {
    this.#mailbox.post(message);
  }

  #handle(message: RunMessage<R>): void {
    const { state, effects } = transition(this.#state, message, this.#now());
    this.#state = state;
    for (const effect of effects) {
      try {
        this.#apply(effect);
      } catch (err) {
        this.#noteFault(err);
      }
    }
  }

  #apply(effect: RunEffect<N, R>): void {
    switch (effect.type) {
      case 'dispatch':
        this.#dispatch(effect);
        return;
      case 'cancel.task':
        this.#cancelTask(effect.taskId, effect.attempt);
        return;
      case 'emit': {
        const event = effect.event;
        if (event.type === 'run.finish') {
          try {
            this.events.emit('run.finish', event);
          } finally {
            if (this.#fault === undefined) this.#resolve(event.result);
            else this.#reject(this.#fault);
          }
          return;
        }
        // eventemitter3's typed emit needs the event name and payload to agree statically.
        (this.events.emit as (name: string, e: unknown) => boolean)(event.type, event);
        return;
      }
    }
  }

  #dispatch(task: TaskRequest<N>): void {
    const { taskId, attempt } = task;
    let pending: Promise<R>;
    try {
      pending = Promise.resolve(this.#execute({ taskId, attempt, node: task.node }));
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (result) => this.#mailbox.post({ type: 'task.completed', taskId, attempt, result }),
      (err: unknown) =>
        this.#mailbox.post({ type: 'task.failed', taskId, attempt, error: serializeError(err, isRetryable(err)) }),
    );
  }

  #cancelTask(taskId: string, attempt: number): void {
    if (!this.#cancel) return;
    const report = (err: unknown) => {
      this.events.emit('cancel.failed', { taskId, attempt, error: serializeError(err) });
    };
    try {
      Promise.resolve(this.#cancel({ taskId, attempt })).catch(report);
    } catch (err) {
      report(err);
    }
  }

  #noteFault(err: unknown): void {
    if (this.#fault !== undefined) return;
    this.#fault = new EngineError('internal', 'build run: an event listener failed', err);
  }
}

