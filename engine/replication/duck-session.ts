/**
 * A DuckDB connection as one replication task uses it: the connection of a
 * database file's actor (main thread), or a task-local in-memory instance
 * (worker threads, file sources and targets). Statements check the task's
 * signal first, and aborting it interrupts the statement in flight
 * (`connection.interrupt()`, repeated until the statement settles: an
 * interrupt that lands between two of DuckDB's checks is lost); an
 * interrupted statement fails with `cancelled`.
 *
 * The task-local instance never opens a database file: file readers and
 * writers run in memory, spilling to the task's temp directory past
 * `memory_limit`, so exporting a large table keeps memory bounded.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { EngineError } from '../errors.js';
import { cancelUntilSettled } from '../targets/sql-driver.js';
import { messageOf } from './pg-session.js';

export class DuckSession {
  /** A `threads` setting to put back once the failed transaction it could not be restored in is rolled back. */
  #threadsToRestore: string | undefined;

  constructor(
    readonly conn: DuckDBConnection,
    readonly signal: AbortSignal,
  ) {}

  translate(err: unknown): EngineError {
    if (err instanceof EngineError) return err;
    const message = messageOf(err);
    if (this.signal.aborted || /^INTERRUPT Error/.test(message)) return new EngineError('cancelled', 'cancelled');
    return new EngineError('node', message);
  }

  check(): void {
    if (this.signal.aborted) throw new EngineError('cancelled', 'cancelled');
  }

  /** Runs one statement; resolves to the rows it changed (DML) or returned. */
  async run(sql: string): Promise<number> {
    const r = await this.#interruptible(() => this.conn.run(sql));
    return Number(r.rowsChanged);
  }

  async rows(sql: string): Promise<unknown[][]> {
    return (await this.#interruptible(() => this.conn.runAndReadAll(sql))).getRowsJS() as unknown[][];
  }

  /**
   * Starts a statement after the signal check; while it runs, an abort
   * interrupts it. Without this a long statement on a database file's
   * thread (DuckDB → DuckDB `INSERT … SELECT`) ran to its end after a cancel.
   */
  async #interruptible<T>(start: () => Promise<T>): Promise<T> {
    this.check();
    const running = start();
    const onAbort = () => void cancelUntilSettled(running, () => this.conn.interrupt(), 100);
    this.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await running;
    } catch (err) {
      throw this.translate(err);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }

  async cleanup(sql: string): Promise<void> {
    await this.conn.run(sql).catch(() => {});
    if (this.#threadsToRestore !== undefined) await this.#restoreThreads(this.#threadsToRestore);
  }

  /**
   * Runs `work` with DuckDB on one thread, the setting put back afterwards.
   * For statements whose source is a JavaScript table function (a single
   * scanning thread): DuckDB's idle second thread spins waiting for tasks,
   * and loading 1M rows took ≈0.6 s more CPU with it. `threads` is global
   * to the instance; the file's actor runs nothing else on it meanwhile.
   * Inside a transaction that fails, the setting can only be restored after
   * the ROLLBACK, which `cleanup` does.
   */
  async singleThreaded<T>(work: () => Promise<T>): Promise<T> {
    const threads = String((await this.rows(`SELECT current_setting('threads')`))[0]?.[0] ?? '1');
    if (Number(threads) <= 1) return work();
    await this.run('SET threads = 1');
    try {
      return await work();
    } finally {
      await this.#restoreThreads(threads);
    }
  }

  async #restoreThreads(threads: string): Promise<void> {
    try {
      await this.conn.run(`SET threads = ${Number(threads)}`);
      this.#threadsToRestore = undefined;
    } catch {
      this.#threadsToRestore = threads; // an aborted transaction: after its ROLLBACK
    }
  }

  /** Text lines of a one-column query, joined per DuckDB chunk (≈2048 rows). */
  async *lines(sql: string): AsyncGenerator<string> {
    const result = await this.#interruptible(() => this.conn.stream(sql));
    for (;;) {
      const chunk = await this.#interruptible(() => result.fetchChunk());
      if (chunk === null || chunk.rowCount === 0) return;
      const vector = chunk.getColumnVector(0);
      const parts: string[] = new Array(chunk.rowCount);
      for (let i = 0; i < chunk.rowCount; i++) parts[i] = vector.getItem(i) as string;
      yield parts.join('');
    }
  }
}

/**
 * Runs `work` on a private in-memory DuckDB (never a database file), closed
 * afterwards; aborting `signal` interrupts its statement in flight (the
 * session's own doing).
 */
export async function withMemoryDuckdb<T>(signal: AbortSignal, tempDir: string, work: (s: DuckSession) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:', { temp_directory: tempDir, memory_limit: '512MB' });
  const conn = await instance.connect();
  try {
    return await work(new DuckSession(conn, signal));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
