/**
 * The narrow waist between the shared materialization flows and a database
 * client. A driver runs statements on one connection and reports counts the
 * way the run reports them (PostgreSQL: the command tag; DuckDB: the statement's
 * `Count` value), turns database errors into `SqlError` (message redacted,
 * SQLSTATE kept for the flows that branch on it), and turns a cancelled
 * statement into the `cancelled` error.
 */
import { EngineError } from '../errors.js';

export interface StatementResult {
  /** Rows written/affected for DDL and DML; rows returned for queries. */
  readonly count: number;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** Positions of the columns whose values arrive as text but are numbers (PostgreSQL's int8 and numeric). */
  readonly numericText?: readonly number[];
}

export interface SqlDriver {
  /** See `TargetSession.cancelKey`. */
  readonly cancelKey: string;
  /** One statement (or, without params, a script whose last result is returned). */
  query(sql: string, params?: readonly (string | number | boolean | null)[]): Promise<StatementResult>;
  /**
   * Statements in order, in as few round trips as the client allows
   * (PostgreSQL: one); returns each statement's count. On failure the rest
   * is not run and an explicit transaction is left aborted: follow with
   * `cleanup('ROLLBACK')`.
   */
  batch(statements: readonly string[]): Promise<number[]>;
  /** Best-effort statement that still runs after a cancel and never throws (ROLLBACK, DROP TMP). */
  cleanup(sql: string): Promise<void>;
  /**
   * Stops the in-flight statement, or makes the next `query`/`batch` fail if
   * none is running; the request is consumed by that one `cancelled` failure.
   */
  cancel(): Promise<void>;
  close(): Promise<void>;
}

/** A database error: `message` is the driver's text with secrets removed. */
export class SqlError extends EngineError {
  /** PostgreSQL SQLSTATE (`2BP01`, `42P16`); undefined on DuckDB. */
  readonly sqlState: string | undefined;

  constructor(message: string, sqlState?: string) {
    super('node', message);
    this.name = 'SqlError';
    this.sqlState = sqlState;
  }
}

export function cancelledError(): EngineError {
  return new EngineError('cancelled', 'cancelled');
}

export function isCancelled(err: unknown): boolean {
  return err instanceof EngineError && err.code === 'cancelled';
}

export function sqlStateOf(err: unknown): string | undefined {
  return err instanceof SqlError ? err.sqlState : undefined;
}

/**
 * Repeats `signal` until `settled` resolves: a cancel request that reaches
 * the database between two statements is a no-op there, so the caller keeps
 * asking while the statement is still in flight (bounded: `attempts` × `everyMs`).
 */
export async function cancelUntilSettled(settled: Promise<unknown>, signal: () => Promise<void> | void, everyMs = 200, attempts = 50): Promise<void> {
  let done = false;
  const watch = settled.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < attempts && !done; i++) {
    await signal();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([watch, new Promise((r) => (timer = setTimeout(r, everyMs)))]);
    clearTimeout(timer);
  }
}
