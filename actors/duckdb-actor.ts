/**
 * The DuckDB actor: the one owner of a DuckDB database file in this process.
 * DuckDB allows one writer per file, and opening the same file twice in one
 * process silently loses data, so every piece of work for a file — build
 * nodes, replication streams, query steps, monitor measurements — goes
 * through the actor that `duckdbActor(path)` returns for it.
 *
 * The actor lives on its own thread: a one-thread Piscina pool per file
 * (started by the first job) that holds the file's only `DuckDBInstance`
 * (actors/pool-tasks/duckdb-file.ts). This thread keeps the queue and sends the
 * running job's tasks there as messages; nothing of DuckDB's runs on the
 * host thread, which in the daemon only routes messages and serves HTTP.
 * A job is a function of a `DuckDbThread`: it runs pool tasks on the file's
 * thread (`build.node`, `replication.stream`, …) or drives a session whose
 * every call is such a task (`withSession`).
 *
 * Job states: queued → running → settled. Jobs run strictly one at a time
 * in submission (FIFO) order. A queued job whose signal aborts leaves the
 * queue with a `cancelled` error without touching the database; a running
 * one has its tasks cancelled on the file's thread (DuckDB's
 * `connection.interrupt()`, repeated until the statement stops; the thread
 * is never killed) and, if it then fails, fails with `cancelled`.
 *
 * Actor lifecycle: open (thread and instance started by the first job) →
 * closing (`close()` called: new jobs are refused, queued ones still run) →
 * closed (instance closed on its thread, thread stopped, the path's registry
 * entry freed).
 */
import { EngineError } from '../engine/errors.js';
import { instanceKey } from '../engine/targets/duckdb/instance-cache.js';
import type { DuckDbConnection } from '../engine/connections/connection.js';
import type { TargetSession } from '../engine/targets/target.js';
import { TaskPool } from './pool.js';
import type { DuckDbFileInfo, SessionMethod } from './pool-tasks/duckdb-file.js';
import type { Task, TaskResult } from './pool-tasks/index.js';

/** What a running job may do with the file: everything happens on the file's thread. */
export interface DuckDbThread {
  /** Absolute file path, or `:memory:`. */
  readonly path: string;
  /** Runs a pool task on the file's thread; cancelled with the job. */
  run<T extends Task>(task: T): Promise<TaskResult<T>>;
  /** Runs `work` with a session on the file whose every call runs on the file's thread; closed after. */
  withSession<T>(connection: DuckDbConnection, work: (session: TargetSession) => Promise<T>): Promise<T>;
}

export type DuckDbJob<T> = (thread: DuckDbThread) => Promise<T>;

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
  /** Aborts the job's tasks on the file's thread. */
  readonly stop: AbortController;
}

const registry = new Map<string, DuckDbActor>();

/** Registry key: `:memory:` as is, any other path absolute with directory symlinks resolved. */
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

let sessionSeq = 0;

export class DuckDbActor {
  /** Absolute file path, or `:memory:`. */
  readonly path: string;
  #pool: TaskPool | undefined;
  #opened: Promise<DuckDbFileInfo> | undefined;
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

  /** Queues `job`; it gets the file's thread once every earlier job has settled. */
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

  /** The file's thread and how many times it opened the file (opens the file if no job did yet). */
  info(): Promise<DuckDbFileInfo> {
    return this.#open();
  }

  /** Stops the running job's statements; resolves once that job has settled. No-op when idle. */
  async interrupt(): Promise<void> {
    const running = this.#running;
    if (!running) return;
    running.stop.abort();
    await running.settled;
  }

  /** Refuses new jobs, lets queued ones finish, then closes the instance and stops the thread. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    if (this.pending > 0) await new Promise<void>((r) => (this.#drained = r));
    try {
      const pool = this.#pool;
      if (pool) {
        if (await this.#opened?.then(() => true, () => false)) await pool.run({ type: 'duckdb.close', path: this.path }).catch(() => {});
        await pool.destroy();
      }
    } finally {
      this.#pool = undefined;
      this.#opened = undefined;
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
      this.#running.stop.abort();
    }
  }

  #pump(): void {
    if (this.#running) return;
    const entry = this.#queue.shift();
    if (!entry) {
      this.#drained?.();
      return;
    }
    const stop = new AbortController();
    const outcome = this.#open().then(() => entry.job(this.#thread(stop.signal)));
    const running: Running = { entry, settled: outcome.then(noop, noop), stop };
    this.#running = running;
    outcome.then(
      (value) => {
        this.#finish(entry);
        entry.resolve(value);
      },
      (err: unknown) => {
        this.#finish(entry);
        const cancelled = stop.signal.aborted && !(err instanceof EngineError && err.code === 'cancelled');
        entry.reject(cancelled ? cancelledError(err) : err);
      },
    );
  }

  #finish(entry: Entry): void {
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort);
    this.#running = undefined;
    this.#pump();
  }

  /** The running job's view of the file's thread; `signal` is the job's stop. */
  #thread(signal: AbortSignal): DuckDbThread {
    const pool = this.#pool!;
    const run = <T extends Task>(task: T) => pool.run(task, { signal }) as Promise<TaskResult<T>>;
    return {
      path: this.path,
      run,
      async withSession(connection, work) {
        const sid = `s${++sessionSeq}`;
        const call = (method: SessionMethod) =>
          (...args: unknown[]) => pool.run({ type: 'duckdb.session', connection, sid, op: 'call', method, args }, { signal });
        const session = sessionProxy(sid, call);
        try {
          return await work(session);
        } finally {
          await pool.run({ type: 'duckdb.session', connection, sid, op: 'close' }).catch(() => {});
        }
      },
    };
  }

  #open(): Promise<DuckDbFileInfo> {
    this.#opened ??= (async () => {
      // One thread, one task at a time: the file's single writer. It lives as long as the actor.
      this.#pool ??= new TaskPool({ maxThreads: 1, minThreads: 1, idleTimeout: Number.POSITIVE_INFINITY, concurrentTasksPerWorker: 1 });
      try {
        return await this.#pool.run({ type: 'duckdb.open', path: this.path });
      } catch (err) {
        this.#opened = undefined; // let the next job try again
        // The thread's error arrives as one message chain: keep the head as the message and the driver's words as the cause.
        const head = `could not open duckdb database ${this.path}`;
        const text = err instanceof Error ? err.message : String(err);
        throw new EngineError('connection', head, new Error(text.startsWith(`${head}: `) ? text.slice(head.length + 2) : text));
      }
    })();
    return this.#opened;
  }
}

const METHODS: readonly SessionMethod[] = [
  'relationKind', 'catalog', 'createSchemas', 'exec', 'fullRefresh', 'view', 'truncate', 'append', 'stage', 'merge',
  'dropRelation', 'maxValue', 'columnType', 'query', 'countQuery', 'loadSeed',
];

/**
 * A `TargetSession` whose methods are calls on the file's thread. `cancel`
 * is the job's signal (the actor's stop); `close` is the job's end.
 */
function sessionProxy(sid: string, call: (method: SessionMethod) => (...args: unknown[]) => Promise<unknown>): TargetSession {
  const session: Record<string, unknown> = { cancelKey: `duckdb-proxy:${sid}`, cancel: async () => {}, close: async () => {} };
  for (const m of METHODS) session[m] = call(m);
  return session as unknown as TargetSession;
}

function noop(): void {}
