/**
 * One pooled PostgreSQL connection as a `SqlDriver`.
 *
 * Counts come from the command tag (`rowCount`). Statements without
 * parameters go over the simple-query protocol, so `batch` sends a whole
 * `BEGIN; …; COMMIT;` in one round trip (as few round trips as
 * possible). Cancellation uses `pg_cancel_backend(<pid>)` from the target's
 * control connection, repeated until the statement settles so
 * a request that lands between two statements is not lost.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { redact } from '../../connections/redact.js';
import { SqlError, cancelUntilSettled, cancelledError, type SqlDriver, type StatementResult } from '../sql-driver.js';

/** Cancels a backend by pid; implemented by the target's control connection. */
export interface BackendCanceller {
  cancelBackend(pid: number): Promise<void>;
}

type Param = string | number | boolean | null;

interface PgLikeError {
  code?: unknown;
  message?: unknown;
  /** 1-based character offset of the error in the statement text, as the server sends it. */
  position?: unknown;
}

/**
 * psql's rendering of an error position: the statement's line holding it and
 * a caret under the character (`LINE 6:   nosuchcol as c` / `          ^`),
 * as DuckDB writes into its own messages — the CLI maps that line back to the
 * model file (cli/build-command/sql-error-location.ts).
 */
export function positionLines(sql: string, position: number): string {
  const offset = Math.min(Math.max(position - 1, 0), sql.length);
  const start = sql.lastIndexOf('\n', offset - 1) + 1;
  const endAt = sql.indexOf('\n', offset);
  const line = sql.slice(start, endAt < 0 ? sql.length : endAt).replace(/\r$/, '');
  const number = sql.slice(0, start).split('\n').length;
  const label = `LINE ${number}: `;
  return `\n${label}${line}\n${' '.repeat(label.length + (offset - start))}^`;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** int8 and numeric: pg hands them over as text (they may not fit a JS number). */
const NUMERIC_TEXT = new Set([20, 1700]);

function toResult(r: pg.QueryResult<unknown[]>): StatementResult {
  const numericText = r.fields.flatMap((f, i) => (NUMERIC_TEXT.has(f.dataTypeID) ? [i] : []));
  return { count: r.rowCount ?? 0, columns: r.fields.map((f) => f.name), rows: r.rows, ...(numericText.length > 0 ? { numericText } : {}) };
}

export class PostgresDriver implements SqlDriver {
  private inFlight: Promise<unknown> | undefined;
  /** A cancel request not yet consumed by a failed statement (see SqlDriver.cancel). */
  private cancelRequested = false;
  /** The connection itself failed (no SQLSTATE): it must not go back to the pool. */
  private broken = false;
  private closed = false;

  constructor(
    private readonly client: pg.PoolClient,
    readonly pid: number,
    private readonly canceller: BackendCanceller,
    private readonly secrets: readonly (string | undefined)[],
    private readonly onClose: () => void = () => {},
  ) {}

  get cancelKey(): string {
    return String(this.pid);
  }

  async query(sql: string, params?: readonly Param[]): Promise<StatementResult> {
    const config: pg.QueryConfig<Param[]> & { rowMode: 'array' } = params === undefined ? { text: sql, rowMode: 'array' } : { text: sql, values: [...params], rowMode: 'array' };
    const result = await this.track(() => this.client.query<unknown[], Param[]>(config) as Promise<pg.QueryResult<unknown[]> | pg.QueryResult<unknown[]>[]>, sql);
    return toResult(Array.isArray(result) ? result[result.length - 1]! : result);
  }

  async batch(statements: readonly string[]): Promise<number[]> {
    if (statements.length === 0) return [];
    const text = statements.join(';\n');
    const result = await this.track(() => this.client.query(text) as Promise<pg.QueryResult | pg.QueryResult[]>, text);
    return (Array.isArray(result) ? result : [result]).map((r) => r.rowCount ?? 0);
  }

  /** `COPY … FROM STDIN` fed from `chunks`; resolves to the rows copied. */
  async copyFrom(sql: string, chunks: Iterable<string> | AsyncIterable<string>): Promise<number> {
    return this.track(async () => {
      const stream = this.client.query(copyFrom(sql));
      await pipeline(Readable.from(chunks), stream);
      return stream.rowCount;
    });
  }

  async cleanup(sql: string): Promise<void> {
    if (this.closed || this.broken) return;
    try {
      await this.client.query(sql);
    } catch {
      // Best effort by contract: the caller is already reporting the real failure.
    }
  }

  async cancel(): Promise<void> {
    this.cancelRequested = true;
    const inFlight = this.inFlight;
    if (inFlight !== undefined) await cancelUntilSettled(inFlight, () => this.canceller.cancelBackend(this.pid));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.client.release(this.broken ? true : undefined);
  }

  private consumeCancel(): Error {
    this.cancelRequested = false;
    return cancelledError();
  }

  private async track<T>(start: () => Promise<T>, sql?: string): Promise<T> {
    if (this.cancelRequested) throw this.consumeCancel();
    let work: Promise<T> | undefined;
    try {
      work = start();
      this.inFlight = work;
      return await work;
    } catch (err) {
      throw this.translate(err, sql);
    } finally {
      if (this.inFlight === work) this.inFlight = undefined;
    }
  }

  private translate(err: unknown, sql?: string): Error {
    const e = (err ?? {}) as PgLikeError;
    const code = typeof e.code === 'string' && SQLSTATE.test(e.code) ? e.code : undefined;
    const message = typeof e.message === 'string' ? e.message : String(err);
    // 57014 "canceling statement due to user request" is pg_cancel_backend, possibly sent by
    // Target.cancel from another thread; a statement_timeout has a different message.
    if (this.cancelRequested || (code === '57014' && /user request/i.test(message))) return this.consumeCancel();
    if (code === undefined) this.broken = true;
    const position = typeof e.position === 'string' ? Number(e.position) : NaN;
    const where = sql !== undefined && Number.isInteger(position) && position > 0 ? positionLines(sql, position) : '';
    return new SqlError(redact(message + where, this.secrets), code);
  }
}
