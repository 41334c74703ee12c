/**
 * The embedded StateStore backend: the SQLite Dialect of the one store
 * (sql-store.ts), on one better-sqlite3 connection to a file in WAL mode
 * (readers never block the writer), busy_timeout for the operator commands
 * that open the same file from another process, foreign keys on.
 *
 * better-sqlite3 is synchronous, so a Work runs to its end inside one call
 * and a multi-statement change is simply a `transaction()`; writes use
 * IMMEDIATE transactions so another process's writer makes them wait
 * (busy_timeout) instead of failing on a lock upgrade. Statements are
 * prepared once and cached by their text.
 *
 * Output appends are the hot write (every log line of a running task): one
 * guarded UPDATE of the record's counters and one INSERT of a chunk row, in
 * one prepared IMMEDIATE transaction. Measured on the 2-core dev machine with
 * synchronous=normal: ≈25–30 µs per append on tmpfs (the CPU part; the bare
 * two statements in better-sqlite3 cost the same), ≈50–110 µs on its disk,
 * where WAL page writes and the periodic checkpoint dominate. Rewriting a
 * growing text column instead would copy the whole log on every line. A
 * runtime that buffers lines and flushes every ~100 ms pays this per flush.
 */
import Database from 'better-sqlite3';
import { openDatabase, pragma } from './sqlite-database.js';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { migrate } from './migrations.js';
import { executionPageSql, PUBLIC_JSON } from './sqlite-execution-page.js';
import { SqliteReaders } from './sqlite-readers.js';
import { timedRead } from './timed-read.js';
import { EXECUTION_COLUMNS } from './records.js';
import { changes, driveSync, positional, type ConstraintKind, type Dialect, type Query, type RecordKind, type Row, type Work } from './sql-dialect.js';
import { OUTPUT_TABLES } from './execution-work.js';
import { SqlStore } from './sql-store.js';
import type { ExecutionQuery, StateStore, StateStoreOptions } from './store.js';

const REFRESH_PUBLIC_JSON = `UPDATE executions AS e SET public_json = ${PUBLIC_JSON} WHERE exec_id IN (SELECT value FROM json_each($1)) AND status NOT IN ('queued', 'running')`;

/** A cached statement: its `?` form, which parameter each `?` takes, and its row-object and raw (value-array) forms. */
interface Prepared {
  readonly order: readonly number[] | null;
  readonly statement: Database.Statement;
  raw?: Database.Statement;
}

const CONSTRAINT_CODES: Record<ConstraintKind, string> = {
  unique: 'SQLITE_CONSTRAINT_UNIQUE',
  foreign_key: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  // SQLite names no constraint in its error; the unique violation an execution write can hit is
  // the one-running-per-job index (exec ids are fresh KSUIDs).
  one_running_per_job: 'SQLITE_CONSTRAINT_UNIQUE',
};

class SqliteDialect implements Dialect {
  readonly kind = 'sqlite' as const;
  readonly lockRows = '';
  readonly skipLocked = '';
  readonly claimCounts = '';
  readonly executionColumns = EXECUTION_COLUMNS.join(', ');
  private readonly statements = new Map<string, Prepared>();
  private readonly readers: SqliteReaders | undefined;
  /** The whole Work in one IMMEDIATE transaction, through one wrapper made once rather than one per call. */
  private readonly inTransaction: Database.Transaction<(fn: () => unknown) => unknown>;
  /** Made on the first append: the tables exist only once the migrations ran. */
  private appenders: Record<RecordKind, (execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>) => void> | undefined;

  constructor(private readonly db: Database.Database, options: StateStoreOptions, file: string) {
    const threads = options.readerThreads ?? 0;
    this.readers = threads > 0 && file !== ':memory:' ? new SqliteReaders(file, threads) : undefined;
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * Counts the statements of this connection that may write (bumped before
   * each runs; a write that changes nothing only costs a spurious change of
   * the token): the own-writes half of changeToken, without a query. Every
   * statement comes through prepared() except the appenders' own, which count
   * themselves; a transaction counts only through its statements, so one
   * that only reads (a claim that finds nothing queued) changes nothing.
   */
  private writes = 0;

  private prepared(sql: string): Prepared {
    let p = this.statements.get(sql);
    if (!p) {
      const { sql: text, order } = positional(sql);
      this.statements.set(sql, (p = { order, statement: this.db.prepare(text) }));
    }
    if (!p.statement.readonly) this.writes++;
    return p;
  }

  private runQuery = (q: Query): unknown => {
    if (q.mode === 'exec') {
      this.writes++;
      return void this.db.exec(q.sql);
    }
    const p = this.prepared(q.sql);
    const args = p.order === null ? q.params : p.order.map((i) => q.params[i]);
    if (q.mode === 'changes') return p.statement.run(...args).changes;
    if (q.mode === 'rows') return p.statement.all(...args) as Row[];
    p.raw ??= this.db.prepare(p.statement.source).raw(true);
    return p.raw.all(...args);
  };

  read<T>(work: Work<T>): T {
    return driveSync(work, this.runQuery);
  }

  write<T>(work: Work<T>): T {
    return this.inTransaction.immediate(() => driveSync(work, this.runQuery)) as T;
  }

  bool = (v: boolean): number => (v ? 1 : 0);
  list = (items: readonly unknown[]): string => JSON.stringify(items);
  inList = (column: string, param: string): string => `${column} IN (SELECT value FROM json_each(${param}))`;
  listRows = (param: string): string => `json_each(${param}) AS l`;
  unindexed = (column: string): string => `+${column}`;

  violates(err: unknown, kind: ConstraintKind): boolean {
    return err instanceof Database.SqliteError && err.code === CONSTRAINT_CODES[kind];
  }

  /** Each closed record dropped its execution's stored JSON (migration 3): build it again, once. */
  afterClose(ids: unknown): Work<number> {
    return changes(REFRESH_PUBLIC_JSON, [ids]);
  }

  patchExecution(update: string, params: readonly unknown[], close: (status: string, endTime: string) => Work<number>): boolean {
    return this.write(
      (function* () {
        const [done] = (yield { sql: update, params, mode: 'rows' }) as Row[];
        if (!done) return false;
        if (done.status !== 'queued' && done.status !== 'running') yield* close(String(done.status), String(done.end_time));
        return true;
      })(),
    );
  }

  /** Per record kind: the output append as one prepared IMMEDIATE transaction, built once (the hot path). */
  private appender(kind: RecordKind): (execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>) => void {
    const { table, out, col } = OUTPUT_TABLES[kind];
    const grow = this.db.prepare(
      `UPDATE ${table} SET output_bytes = output_bytes + ?, output_chunks = output_chunks + 1
       WHERE exec_id = ? AND ${col} = ? AND output_truncated = 0 AND output_bytes + ? <= ? RETURNING output_chunks`,
    );
    const insert = this.db.prepare(`INSERT INTO ${out} (exec_id, ${col}, n, chunk) VALUES (?, ?, ?, ?)`);
    const tx = this.db.transaction((execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>) => {
      const fast = grow.get(size, execId, id, size, cap) as Row | undefined;
      if (fast) return void insert.run(execId, id, fast.output_chunks, text);
      driveSync(crossing(), this.runQuery);
    });
    return (execId, id, text, size, cap, crossing) => {
      this.writes++;
      tx.immediate(execId, id, text, size, cap, crossing);
    };
  }

  append(kind: RecordKind, execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>): void {
    (this.appenders ??= { task: this.appender('task'), step: this.appender('step') })[kind](execId, id, text, size, cap, crossing);
  }

  insertMany(table: string, columns: readonly string[], _bigint: ReadonlySet<string>, rows: readonly (readonly unknown[])[]): void {
    const insert = this.prepared(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).statement;
    this.inTransaction.immediate(() => {
      for (const r of rows) insert.run(...r);
    });
  }

  /** On a reader thread when the store has them (the daemon), else on this connection. */
  async executionPage(q: ExecutionQuery): Promise<Buffer> {
    const page = executionPageSql(q);
    if (page === null) return Buffer.from('[]');
    if (this.readers !== undefined) return this.readers.jsonArray(page.sql, page.params, page.fill);
    const found = (this.rawStatement(page.sql).all(...page.params) as [string | number][]).map((r) => r[0]);
    const missing = found.filter((v) => typeof v === 'number');
    if (missing.length > 0) {
      const texts = new Map(this.rawStatement(page.fill).all(JSON.stringify(missing)) as [number, string][]);
      for (let i = 0; i < found.length; i++) if (typeof found[i] === 'number') found[i] = texts.get(found[i] as number)!;
    }
    return Buffer.from(`[${found.join(',')}]`);
  }

  /** A read-only statement in `?` form returning value arrays, cached apart from the Work statements. */
  private readonly rawStatements = new Map<string, Database.Statement>();
  private rawStatement(sql: string): Database.Statement {
    let s = this.rawStatements.get(sql);
    if (!s) this.rawStatements.set(sql, (s = this.db.prepare(sql).raw(true)));
    return s;
  }

  /**
   * `data_version`, read at most once per turn of the event loop (it costs a
   * statement, ≈3 µs, and a busy daemon asks for the token on every page
   * request): it changes when another connection — in this process or
   * another (operator commands) — commits. Undefined when not read this turn.
   */
  private dataVersionThisTurn: number | undefined;

  dataVersion(): number {
    if (this.dataVersionThisTurn === undefined) {
      this.dataVersionThisTurn = (this.rawStatement('PRAGMA data_version').get() as [number])[0];
      setImmediate(() => (this.dataVersionThisTurn = undefined)).unref();
    }
    return this.dataVersionThisTurn;
  }

  /**
   * This connection's write count and the data version together change on
   * every commit that can alter a read: a write of this store at once, a
   * commit of another connection from the next turn of the event loop on
   * (a reader of the token in the same turn sees the state as of that
   * turn's start, as if it had asked a moment earlier). Inside a
   * transaction this connection would read its own uncommitted rows, which a
   * rollback could undo: no token then.
   */
  changeToken(): string | undefined {
    if (this.db.inTransaction) return undefined;
    return `${this.dataVersion()}.${this.writes}`;
  }

  async ping(timeoutMs: number): Promise<number> {
    return timedRead(() => this.rawStatement('SELECT 1 FROM executions LIMIT 1').get(), timeoutMs);
  }

  async close(): Promise<void> {
    await this.readers?.close();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating the file and its directory) and migrates a SQLite state store. */
export function openSqliteStore(file: string, options: StateStoreOptions = {}): StateStore {
  const memory = file === ':memory:';
  const path = memory ? file : resolve(file);
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  let db: Database.Database;
  try {
    db = openDatabase(path);
  } catch (err) {
    throw new EngineError('internal', `cannot open state store ${path}: ${(err as Error).message}`, err);
  }
  let dialect: SqliteDialect;
  try {
    pragma(db, 'journal_mode = WAL');
    pragma(db, 'busy_timeout = 5000');
    pragma(db, `synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    pragma(db, 'foreign_keys = ON');
    dialect = new SqliteDialect(db, options, path);
    dialect.write(migrate('sqlite'));
  } catch (err) {
    db.close();
    throw err;
  }
  return new SqlStore(dialect, options);
}
