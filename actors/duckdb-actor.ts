/**
 * The DuckDB actor: the one owner of a DuckDB database file in this process.
 * DuckDB allows one writer per file, and opening the same file twice in one
 * process silently loses data, so every piece of work for a file
 * — models, seeds, state probes, sub-projects — goes through the actor that
 * `duckdbActor(path)` returns for it: one `DuckDBInstance`, one connection,
 * jobs run strictly one at a time in submission (FIFO) order. The instance
 * itself comes from the engine's per-file instance cache, so a target driver
 * opened on the same file elsewhere shares it rather than opening it twice.
 *
 * Job states: queued → running → settled. A queued job whose signal aborts
 * leaves the queue with a `cancelled` error without touching the database; a
 * running one is interrupted (`connection.interrupt()`, repeated until the
 * job settles, since an interrupt landing between two statements is a no-op)
 * and, if it then fails, fails with `cancelled`.
 *
 * Actor lifecycle: open (instance created lazily by the first job) → closing
 * (`close()` called: new jobs are refused, queued ones still run) → closed
 * (connection and instance closed, the path's registry entry freed).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { EngineError } from '../engine/errors.js';
import { closeDuckdbInstance, duckdbInstance, instanceKey } from '../engine/targets/duckdb/instance-cache.js';

export type DuckDbJob<T> = (connection: DuckDBConnection) => Promise<T>;

export interface DuckDbJobOptions {
  /** Aborting cancels the job: dropped if still queued, interrupted if running. */
  readonly signal?: AbortSignal;
}

interface Entry {
  readonly job: DuckDbJob<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort?: () => void;
}

interface Running {
  readonly entry: Entry;
  readonly settled: Promise<void>;
  interrupted: boolean;
}

const INTERRUPT_EVERY_MS = 50;
const INTERRUPT_TRIES = 200;
const registry = new Map<string, DuckDbActor>();

/** Registry key: `:memory:` as is, any other path absolute with directory symlinks resolved (the instance cache's key). */
export function duckdbKey(path: string): string {
  return instanceKey(path);
}

/** The actor owning `path` in this process, created on first use. */
export function duckdbActor(path: string): DuckDbActor {
  const key = duckdbKey(path);
  let actor = registry.get(key);
  if (!actor) {
    actor = new DuckDbActor(key);
    registry.set(key, actor);
  }
  return actor;
}

/** Closes every DuckDB actor of the process (shutdown). */
export async function closeAllDuckDbActors(): Promise<void> {
  await Promise.all([...registry.values()].map((a) => a.close()));
}

function cancelledError(cause?: unknown): EngineError {
  return new EngineError('cancelled', 'cancelled', cause);
}

export class DuckDbActor {
  /** Absolute file path, or `:memory:`. */
  readonly path: string;
  #opened = false;
  #connection: Promise<DuckDBConnection> | undefined;
  readonly #queue: Entry[] = [];
  #running: Running | undefined;
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  /** Use `duckdbActor(path)`: a second actor for the same file would defeat the point. */
  constructor(path: string) {
    this.path = path;
  }

  /** Jobs waiting plus the one running. */
  get pending(): number {
    return this.#queue.length + (this.#running ? 1 : 0);
  }

  /** Queues `job`; it gets the actor's connection once every earlier job has settled. */
  run<T>(job: DuckDbJob<T>, options: DuckDbJobOptions = {}): Promise<T> {
    if (this.#closing) return Promise.reject(new EngineError('internal', `duckdb ${this.path}: actor is closed`));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(cancelledError());
    return new Promise<T>((resolvePromise, rejectPromise) => {
      const entry: Entry = { job, resolve: resolvePromise as (v: unknown) => void, reject: rejectPromise, signal };
      if (signal) {
        entry.onAbort = () => this.#abort(entry);
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#queue.push(entry);
      this.#pump();
    });
  }

  /** Stops the running job's query; resolves once that job has settled. No-op when idle. */
  async interrupt(): Promise<void> {
    const running = this.#running;
    if (!running) return;
    running.interrupted = true;
    const connection = await this.#connection?.catch(() => undefined);
    if (!connection || this.#running !== running) return;
    // An interrupt that lands between two statements of a job is a no-op, so
    // keep asking until the job settles (bounded: INTERRUPT_EVERY_MS × INTERRUPT_TRIES).
    let settled = false;
    void running.settled.then(() => (settled = true));
    for (let i = 0; i < INTERRUPT_TRIES && !settled; i++) {
      connection.interrupt();
      await Promise.race([running.settled, delay(INTERRUPT_EVERY_MS)]);
    }
  }

  /** Refuses new jobs, lets queued ones finish, then closes the connection and the instance. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    if (this.pending > 0) await new Promise<void>((r) => (this.#drained = r));
    try {
      const connection = await this.#connection?.catch(() => undefined);
      connection?.closeSync();
      if (this.#opened) await closeDuckdbInstance(this.path);
    } finally {
      this.#opened = false;
      this.#connection = undefined;
      if (registry.get(this.path) === this) registry.delete(this.path);
    }
  }

  #abort(entry: Entry): void {
    const at = this.#queue.indexOf(entry);
    if (at >= 0) {
      this.#queue.splice(at, 1);
      entry.reject(cancelledError());
      if (this.pending === 0) this.#drained?.();
    } else if (this.#running?.entry === entry) {
      void this.interrupt();
    }
  }

  #pump(): void {
    if (this.#running) return;
    const entry = this.#queue.shift();
    if (!entry) {
      this.#drained?.();
      return;
    }
    const outcome = this.#open().then((connection) => entry.job(connection));
    const running: Running = { entry, settled: outcome.then(noop, noop), interrupted: false };
    this.#running = running;
    outcome.then(
      (value) => {
        this.#finish(entry);
        entry.resolve(value);
      },
      (err: unknown) => {
        this.#finish(entry);
        const cancelled = running.interrupted && !(err instanceof EngineError && err.code === 'cancelled');
        entry.reject(cancelled ? cancelledError(err) : err);
      },
    );
  }

  #finish(entry: Entry): void {
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort);
    this.#running = undefined;
    this.#pump();
  }

  #open(): Promise<DuckDBConnection> {
    this.#connection ??= (async () => {
      try {
        const instance = await duckdbInstance(this.path);
        this.#opened = true;
        return await instance.connect();
      } catch (err) {
        this.#connection = undefined; // let the next job try again
        throw new EngineError('connection', `could not open duckdb database ${this.path}`, err);
      }
    })();
    return this.#connection;
  }
}

function noop(): void {}
