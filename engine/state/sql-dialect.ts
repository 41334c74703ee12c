/**
 * The seam between the one state store (sql-store.ts) and its two backends
 * (sqlite-store.ts, postgres-store.ts); docs/architecture.md, "The state
 * store", says why it is shaped so.
 *
 * Store logic is written once, as generators that yield the statements they
 * need (`Work`) and receive each result: one SQL text per query, with
 * numbered `$n` parameters (the SQLite backend rewrites them to `?`). A
 * backend drives a Work: the SQLite one synchronously, all of it inside one
 * better-sqlite3 call (so nothing of another call interleaves with a
 * transaction, and a method's statements have run by the time it returns its
 * promise, as better-sqlite3 always did); the PostgreSQL one with `await` per
 * statement, on the pool or on one client inside BEGIN … COMMIT.
 *
 * Where the dialects do not share a text, the Dialect below names the
 * difference: a value encoding, a SQL fragment, or a whole operation whose
 * strategy differs (an output append, closing an execution, a bulk insert).
 */
import type { ExecutionQuery } from './store.js';

export type Row = Record<string, unknown>;
export type DialectName = 'sqlite' | 'postgres';

/**
 * One statement: `rows` returns row objects, `values` rows as arrays of
 * column values (cheaper to read), `changes` the number of rows changed,
 * `exec` runs a parameterless statement (DDL) and returns nothing.
 */
export interface Query {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly mode: 'rows' | 'values' | 'changes' | 'exec';
}

/** Store logic that yields statements and receives their results; returns T. */
export type Work<T> = Generator<Query, T, unknown>;

export function* rows(sql: string, params: readonly unknown[] = []): Work<Row[]> {
  return (yield { sql, params, mode: 'rows' }) as Row[];
}

export function* row(sql: string, params: readonly unknown[] = []): Work<Row | undefined> {
  return (yield* rows(sql, params))[0];
}

export function* values(sql: string, params: readonly unknown[] = []): Work<unknown[][]> {
  return (yield { sql, params, mode: 'values' }) as unknown[][];
}

export function* changes(sql: string, params: readonly unknown[] = []): Work<number> {
  return (yield { sql, params, mode: 'changes' }) as number;
}

export function* exec(sql: string): Work<void> {
  yield { sql, params: [], mode: 'exec' };
}

/** Runs a Work whose statements `run` answers at once. */
export function driveSync<T>(work: Work<T>, run: (q: Query) => unknown): T {
  let step = work.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = run(step.value);
    } catch (err) {
      step = work.throw(err);
      continue;
    }
    step = work.next(result);
  }
  return step.value;
}

/** Runs a Work whose statements `run` answers asynchronously. */
export async function driveAsync<T>(work: Work<T>, run: (q: Query) => Promise<unknown>): Promise<T> {
  let step = work.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = await run(step.value);
    } catch (err) {
      step = work.throw(err);
      continue;
    }
    step = work.next(result);
  }
  return step.value;
}

/**
 * `$n` placeholders as `?` for drivers that bind by position only
 * (better-sqlite3 does not bind `?NNN` from an argument list): the text, and
 * which parameter each `?` takes (null when that is simply 1, 2, 3, …).
 */
export function positional(sql: string): Positional {
  let p = positionalTexts.get(sql);
  if (p !== undefined) return p;
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
  p = { sql: text, order: order.every((n, i) => n === i) ? null : order };
  // Texts are few (one per query shape), but a bound keeps a stream of odd shapes from growing it.
  if (positionalTexts.size >= 2000) positionalTexts.clear();
  positionalTexts.set(sql, p);
  return p;
}

export interface Positional {
  readonly sql: string;
  /** Which parameter each `?` takes (0-based); null when the `?` take them in order. */
  readonly order: readonly number[] | null;
}

const positionalTexts = new Map<string, Positional>();

export type ConstraintKind = 'unique' | 'foreign_key' | 'one_running_per_job';
export type RecordKind = 'task' | 'step';

export interface Dialect {
  readonly kind: DialectName;

  /** Runs each statement of `work` on its own (no transaction). */
  read<T>(work: Work<T>): T | Promise<T>;
  /** Runs `work` in one write transaction; a throw rolls it back. */
  write<T>(work: Work<T>): T | Promise<T>;

  /** A boolean as a parameter value (SQLite stores 0/1). */
  bool(v: boolean): unknown;
  /** A list of texts as one parameter value, for `inList` and `listRows`. */
  list(items: readonly unknown[]): unknown;
  /** `<column>` is one of the list parameter `param`. */
  inList(column: string, param: string): string;
  /** The list parameter `param` as a table `l` of one column `value`. */
  listRows(param: string): string;
  /** Appended to a SELECT that reads rows it is about to change (row locks; nothing in SQLite, which locks the file). */
  readonly lockRows: string;
  /** Appended to the claim's SELECT: daemons claiming at once take different rows. */
  readonly skipLocked: string;
  /** `column` in a form the planner will not pick an index for (SQLite `+column`). */
  unindexed(column: string): string;
  /** The select list of an execution record: EXECUTION_COLUMNS, then the cluster fields where they exist. */
  readonly executionColumns: string;
  /** Whether `err` violates that kind of constraint. */
  violates(err: unknown, kind: ConstraintKind): boolean;

  /** Cluster mode only: serialises one owner's claims (a statement taking `$1`, the owner). */
  readonly claimLock?: string;
  /** Cluster mode only: extra `SET` assignments of a claim. */
  readonly claimCounts: string;
  /** Cluster mode only: wraps the execution INSERT so the schedule claim ($n+1 job, $n+2 due) records it in the same statement. */
  withScheduleClaim?(insert: string, n: number): string;
  /** SQLite only: what to run after closing the open records of `ids` (a list parameter): their stored public JSON. */
  afterClose?(ids: unknown): Work<unknown>;

  /**
   * `update` (an UPDATE of one execution, `$1` its id, RETURNING status,
   * end_time) and, when it ended the execution, its open tasks and steps
   * closed (`close`) — atomically. False when `update` changed nothing.
   */
  patchExecution(update: string, params: readonly unknown[], close: (status: string, endTime: string) => Work<number>): Promise<boolean> | boolean;
  /**
   * Appends `text` (`size` UTF-8 bytes) to a record's output while it stays
   * within `cap`; otherwise runs `crossing`, which truncates it.
   */
  append(kind: RecordKind, execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>): Promise<void> | void;
  /** Inserts many rows into `table` in one transaction; `bigint` names the integer columns. */
  insertMany(table: string, columns: readonly string[], bigint: ReadonlySet<string>, rows: readonly (readonly unknown[])[]): Promise<void> | void;
  /** SQLite only: a page of executions as the JSON text of their public shape, built by SQLite. */
  executionPage?(q: ExecutionQuery): Promise<Buffer>;
  /** A number that changes when another connection commits; undefined when the backend cannot tell cheaply. */
  dataVersion(): number | undefined;
  /** StateStore.changeToken. */
  changeToken(): string | undefined;
  ping(timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}
