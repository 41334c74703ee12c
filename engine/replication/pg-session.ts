/**
 * One PostgreSQL connection of a replication task: a dedicated client (its
 * temp tables and session settings die with it), opened with the settings
 * that make COPY text portable — UTC time zone, ISO dates, ISO 8601
 * intervals. Aborting the task's signal stops the statement in flight with
 * `pg_cancel_backend(<pid>)` from a separate connection, and
 * every later statement fails with `cancelled` except the cleanup ones.
 * Messages are redacted: the connection's password never reaches a log.
 */
import type pg from 'pg';
import { Client } from '../targets/postgres/pg-module.js';
import { Readable, type Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { PostgresConnection } from '../connections/connection.js';
import { redact } from '../connections/redact.js';
import { EngineError } from '../errors.js';
import { PgCopyOut } from './pg-copy-out.js';
import { clientConfig, CONNECTION_CHECK } from '../targets/postgres/target.js';

const SESSION_SETTINGS = `SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'iso_8601'; SET extra_float_digits = 1; ${CONNECTION_CHECK}`;

export class PgSession {
  #cancelRequested = false;
  #closed = false;
  readonly #onAbort: () => void;

  private constructor(
    readonly client: pg.Client,
    readonly pid: number,
    private readonly conn: PostgresConnection,
    private readonly signal: AbortSignal,
  ) {
    this.#onAbort = () => void this.cancel();
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  static async open(conn: PostgresConnection, signal: AbortSignal): Promise<PgSession> {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
    const client = new Client(clientConfig(conn));
    client.on('error', () => {});
    try {
      await client.connect();
      const pid = (client as unknown as { processID?: number }).processID ?? Number((await client.query('SELECT pg_backend_pid() AS p')).rows[0].p);
      await client.query(SESSION_SETTINGS);
      return new PgSession(client, pid, conn, signal);
    } catch (err) {
      await client.end().catch(() => {});
      throw new EngineError('connection', `could not connect to ${conn.name}: ${redact(messageOf(err), [conn.password])}`);
    }
  }

  get name(): string {
    return this.conn.name;
  }

  /** A database error as an EngineError (`cancelled` when this task was cancelled). */
  translate(err: unknown): EngineError {
    if (err instanceof EngineError) return err;
    const e = err as { code?: unknown };
    if (this.#cancelRequested || this.signal.aborted || e.code === '57014') return new EngineError('cancelled', 'cancelled');
    return new EngineError('node', redact(messageOf(err), [this.conn.password]));
  }

  #check(): void {
    if (this.signal.aborted) throw new EngineError('cancelled', 'cancelled');
  }

  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<pg.QueryResult<R>> {
    this.#check();
    try {
      return await this.client.query<R>(sql, params as unknown[] | undefined);
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** A statement that runs even after a cancel and never throws (ROLLBACK, DROP of a temp table). */
  async cleanup(sql: string): Promise<void> {
    if (this.#closed) return;
    await this.client.query(sql).catch(() => {});
  }

  /** `COPY (…) TO STDOUT …` as a readable byte stream. */
  copyOut(sql: string): Readable {
    this.#check();
    return this.client.query(copyTo(sql));
  }

  /** `COPY (…) TO STDOUT (FORMAT binary)` for the binary decoder: large spans, no per-row buffers (pg-copy-out.ts). */
  copyOutBinary(sql: string): Readable {
    this.#check();
    return this.client.query(new PgCopyOut(sql));
  }

  /** `COPY … FROM STDIN …` fed from `source` through `via`; resolves to the rows copied. */
  async copyIn(sql: string, source: Readable | AsyncIterable<string | Buffer>, via: Transform): Promise<number> {
    this.#check();
    const stream: Writable & { rowCount: number } = this.client.query(copyFrom(sql));
    try {
      await pipeline(source instanceof Readable ? source : Readable.from(source), via, stream);
      return stream.rowCount;
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** Stops the statement in flight from a separate connection. */
  async cancel(): Promise<void> {
    this.#cancelRequested = true;
    if (this.#closed) return;
    const control = new Client(clientConfig(this.conn));
    control.on('error', () => {});
    try {
      await control.connect();
      await control.query('SELECT pg_cancel_backend($1)', [this.pid]);
    } catch {
      // The connection may already be gone; the task fails with `cancelled` either way.
    } finally {
      await control.end().catch(() => {});
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.signal.removeEventListener('abort', this.#onAbort);
    await this.client.end().catch(() => {});
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
