/**
 * One DuckDB connection as a `SqlDriver`.
 *
 * Counts are the statement's single `Count` value; a query's count is
 * its row count. `batch` runs statements one by one: DuckDB is in-process, so
 * a round trip costs microseconds, and only separate runs report each
 * statement's count. Cancellation is `connection.interrupt()`, repeated until
 * the statement settles (an interrupt that arrives between statements is a
 * no-op in DuckDB).
 */
import { StatementType, type DuckDBConnection, type DuckDBResultReader } from '@duckdb/node-api';
import { SqlError, cancelUntilSettled, cancelledError, type SqlDriver, type StatementResult } from '../sql-driver.js';
import type { Relation } from '../target.js';

type Param = string | number | boolean | null;

function toResult(reader: DuckDBResultReader): StatementResult {
  const columns = reader.columnNames();
  const rows = reader.getRowsJS();
  const isCount = reader.statementType !== StatementType.SELECT && columns.length === 1 && columns[0] === 'Count';
  return { count: isCount ? Number(rows[0]?.[0] ?? 0) : rows.length, columns, rows };
}

export class DuckdbDriver implements SqlDriver {
  private inFlight: Promise<unknown> | undefined;
  /** A cancel request not yet consumed by a failed statement (see SqlDriver.cancel). */
  private cancelRequested = false;
  private closed = false;

  constructor(
    private readonly connection: DuckDBConnection,
    readonly cancelKey: string,
    private readonly onClose: () => void = () => {},
  ) {}

  async query(sql: string, params?: readonly Param[]): Promise<StatementResult> {
    return toResult(await this.track(() => this.connection.runAndReadAll(sql, params === undefined ? undefined : [...params])));
  }

  async batch(statements: readonly string[]): Promise<number[]> {
    const counts: number[] = [];
    for (const sql of statements) counts.push((await this.query(sql)).count);
    return counts;
  }

  /**
   * Appends text values into `rel` with DuckDB's appender, which casts each
   * VARCHAR to the column type; null appends NULL. Joins the connection's
   * open transaction.
   */
  async appendText(rel: Relation, rows: readonly (readonly (string | null)[])[]): Promise<number> {
    return this.track(async () => {
      const appender = await this.connection.createAppender(rel.name, rel.schema, rel.database ?? null);
      try {
        for (const row of rows) {
          for (const value of row) {
            if (value === null) appender.appendNull();
            else appender.appendVarchar(value);
          }
          appender.endRow();
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      return rows.length;
    });
  }

  async cleanup(sql: string): Promise<void> {
    if (this.closed) return;
    try {
      await this.connection.run(sql);
    } catch {
      // Best effort by contract: the caller is already reporting the real failure.
    }
  }

  async cancel(): Promise<void> {
    this.cancelRequested = true;
    const inFlight = this.inFlight;
    if (inFlight !== undefined) await cancelUntilSettled(inFlight, () => this.connection.interrupt(), 100);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.connection.closeSync();
    this.onClose();
  }

  private consumeCancel(): Error {
    this.cancelRequested = false;
    return cancelledError();
  }

  private async track<T>(start: () => Promise<T>): Promise<T> {
    if (this.cancelRequested) throw this.consumeCancel();
    let work: Promise<T> | undefined;
    try {
      work = start();
      this.inFlight = work;
      return await work;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (this.cancelRequested || /^INTERRUPT Error/.test(message)) throw this.consumeCancel();
      throw new SqlError(message);
    } finally {
      if (this.inFlight === work) this.inFlight = undefined;
    }
  }
}
