/**
 * A worker thread a synchronous caller can wait on: the one primitive for a
 * thread whose answers are needed before the caller's current call returns.
 * Every other worker thread is a Piscina pool (actors/pool.ts,
 * module-pool.ts).
 *
 * Why not Piscina here: compiling is one synchronous call (templates render
 * synchronously, and `run_query` in a template must return the rows), so the
 * caller cannot turn its event loop until the answer is in. Piscina hands a
 * task to a thread from the caller's event loop (a new thread's ready
 * message, its task queue, the answer on its port are all read by
 * event-loop callbacks): a task posted by a caller that then blocks would
 * never start, and its answer would never be read. Here a request is posted
 * straight to the thread's port (a port delivers to a thread that is still
 * starting), and the caller blocks in `Atomics.wait` on a shared wake-up
 * counter the thread bumps after each answer, reading the answers with
 * `receiveMessageOnPort`, which needs no event loop.
 *
 * The users: compile-time queries (engine/project/dbt/compile-time-query/sync-query.ts), the
 * render workers of a large compile (engine/compile/parallel-render.ts) and
 * the stat-ahead thread of a warm compile (engine/compile/stat-ahead.ts).
 *
 * The thread runs the default export of a real module (`specifier` next to
 * `base`, its `.ts` source under tsx), started through
 * blocking-thread-entry.ts, which marks the thread ended when it exits —
 * also when that module fails to load — so a caller never waits on a thread
 * that will not answer.
 */
import { MessageChannel, receiveMessageOnPort, SHARE_ENV, Worker, type MessagePort, type Transferable } from 'node:worker_threads';
import { workerEntryUrl } from '../lazy-import.js';

/** What blocking-thread-entry.ts gets as its workerData. */
export interface BlockingThreadData {
  /** The module to run (its default export gets a ThreadSide). */
  readonly base: string;
  readonly specifier: string;
  readonly port: MessagePort;
  /** Int32 [0]: bumped after every answer and when the thread ends (shared by the threads of a group). */
  readonly wake: Int32Array;
  /** Int32 [0]: 1 once the thread has ended. */
  readonly ended: Int32Array;
  readonly data: unknown;
}

/** The thread's side: what its module's default export gets. */
export interface ThreadSide<D> {
  readonly data: D;
  /** Requests from the caller, in order. */
  onRequest(handler: (request: unknown) => void): void;
  /** Posts an answer and wakes the caller. */
  answer(message: unknown, transfer?: readonly Transferable[]): void;
}

export interface BlockingThreadOptions {
  /** The thread's name (debuggers, `top -H`). */
  readonly name: string;
  /** Handed to the module as `side.data`. */
  readonly data?: unknown;
  /** Transferred with `data`. */
  readonly transfer?: readonly Transferable[];
  /** Share this process's environment (the thread reads variables set later). */
  readonly shareEnv?: boolean;
  /** The wake-up counter of a group (newWakeCounter) the caller waits on with receiveAny. */
  readonly wake?: Int32Array;
  /** An uncaught error of the thread (it has ended; its caller sees that). */
  readonly onError?: (err: Error) => void;
}

export type Received<R> = { readonly kind: 'answer'; readonly answer: R } | { readonly kind: 'timed-out' } | { readonly kind: 'ended' };

/** A wake-up counter for threads one caller waits on together. */
export function newWakeCounter(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

export class BlockingThread {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #ended: Int32Array;
  readonly wake: Int32Array;

  constructor(base: string, specifier: string, options: BlockingThreadOptions) {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#ended = new Int32Array(new SharedArrayBuffer(4));
    this.wake = options.wake ?? newWakeCounter();
    const workerData: BlockingThreadData = { base, specifier, port: port2, wake: this.wake, ended: this.#ended, data: options.data };
    this.#worker = new Worker(workerEntryUrl(import.meta.url, './blocking-thread-entry.js'), {
      name: options.name,
      workerData,
      transferList: [port2, ...(options.transfer ?? [])],
      ...(options.shareEnv ? { env: SHARE_ENV } : {}),
    });
    this.#worker.on('error', options.onError ?? (() => {})); // the thread has ended: its caller sees it as ended
    this.#worker.unref();
  }

  get threadId(): number {
    return this.#worker.threadId;
  }

  /** Posts a request; the thread gets it once it has started and loaded its module. */
  post(request: unknown, transfer?: readonly Transferable[]): void {
    this.#port.postMessage(request, transfer);
  }

  /** The next answer, waiting at most `timeoutMs` (blocking this thread). */
  receive<R>(timeoutMs: number): Received<R> {
    const r = receiveAny<R>([this], timeoutMs);
    return r.kind === 'answer' ? { kind: 'answer', answer: r.answer } : r;
  }

  /** An answer already posted, or undefined; 'ended' when none is and the thread has ended. */
  poll<R>(): { readonly answer: R } | 'ended' | undefined {
    // Read the flag first: a thread posts its last answer before it ends.
    const ended = Atomics.load(this.#ended, 0) === 1;
    const m = receiveMessageOnPort(this.#port) as { message: R } | undefined;
    if (m !== undefined) return { answer: m.message };
    return ended ? 'ended' : undefined;
  }

  /** Ends the thread (and what it held: its module is told nothing). */
  stop(): void {
    this.#port.close();
    void this.#worker.terminate();
  }
}

/**
 * The next answer of any of `threads` (which share one wake-up counter),
 * waiting at most `timeoutMs`; 'ended' when every thread has ended with no
 * answer left.
 */
export function receiveAny<R>(threads: readonly BlockingThread[], timeoutMs: number): ({ readonly kind: 'answer'; readonly answer: R; readonly from: BlockingThread }) | { readonly kind: 'timed-out' } | { readonly kind: 'ended' } {
  const wake = threads[0]?.wake;
  if (wake === undefined) return { kind: 'ended' };
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const seen = Atomics.load(wake, 0);
    let ended = 0;
    for (const t of threads) {
      const p = t.poll<R>();
      if (p === 'ended') ended++;
      else if (p !== undefined) return { kind: 'answer', answer: p.answer, from: t };
    }
    if (ended === threads.length) return { kind: 'ended' };
    const left = deadline - performance.now();
    if (left <= 0) return { kind: 'timed-out' };
    Atomics.wait(wake, 0, seen, left); // then look again: an answer, an end, or the deadline
  }
}
