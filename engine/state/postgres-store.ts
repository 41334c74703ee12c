/**
 * The PostgreSQL StateStore backend: the PostgreSQL Dialect of the one store
 * (sql-store.ts), for several daemons sharing one state (possibly on several
 * machines). Same schema and semantics as the SQLite backend; what differs
 * is concurrency:
 *
 * - A Work of several statements runs in a transaction on one pooled client,
 *   or, where that fits, the change is one statement with data-modifying
 *   CTEs (patchExecution, the output append), which is also one round trip.
 * - claimNextQueued picks the oldest queued execution with
 *   `FOR UPDATE OF e SKIP LOCKED`, so daemons claiming at the same moment take
 *   different rows without waiting. Two daemons may still pick two queued
 *   executions of the same job; the partial unique index on running
 *   executions per job rejects the second, which then retries and sees the
 *   job running.
 * - An output append is one guarded UPDATE … RETURNING feeding an INSERT of
 *   the chunk; concurrent appends to one record serialise on its row lock.
 *   That statement also turns synchronous_commit off for its own transaction:
 *   on the dev machine a durable commit waits ≈3.9 ms for the WAL flush
 *   against ≈0.2 ms without. A PostgreSQL crash can then lose the last
 *   fraction of a second of log lines (never a status: those commits stay
 *   durable), which restart recovery reports as an interrupted execution.
 */
import type pg from 'pg';
import { Pool } from '../targets/postgres/pg-module.js';
import { inTransaction } from './pg-transaction.js';
import { PgPinger } from './pg-ping.js';
import { guardPool } from '../targets/postgres/pg-guard.js';
import { EngineError } from '../errors.js';
import { migrate } from './migrations.js';
import { EXECUTION_COLUMNS } from './records.js';
import { driveAsync, type ConstraintKind, type Dialect, type Query, type RecordKind, type Work } from './sql-dialect.js';
import { OUTPUT_TABLES } from './execution-work.js';
import { SqlStore } from './sql-store.js';
import type { StateStore, StateStoreOptions } from './store.js';

type Queryable = pg.Pool | pg.PoolClient;

const ACTIVE = "('queued', 'running')";
const CONSTRAINT_CODES: Partial<Record<ConstraintKind, string>> = { unique: '23505', foreign_key: '23503' };

async function runQuery(on: Queryable, q: Query): Promise<unknown> {
  if (q.mode === 'values') return (await on.query({ text: q.sql, values: q.params as unknown[], rowMode: 'array' })).rows;
  const r = await on.query(q.sql, q.params as unknown[]);
  if (q.mode === 'rows') return r.rows;
  return q.mode === 'changes' ? (r.rowCount ?? 0) : undefined;
}

class PostgresDialect implements Dialect {
  readonly kind = 'postgres' as const;
  readonly lockRows = ' FOR UPDATE';
  readonly skipLocked = ' FOR UPDATE OF e SKIP LOCKED';
  /** Cluster mode: claims so far. */
  readonly claimCounts = ', attempt = attempt + 1';
  readonly claimLock = 'SELECT pg_advisory_xact_lock(7350211, hashtext($1))';
  /** Cluster mode: the daemon that claimed it and the project-files version it ran on. */
  readonly executionColumns = [...EXECUTION_COLUMNS, 'claimed_by', 'tree_version'].join(', ');
  private readonly pinger: PgPinger;
  private closed = false;

  constructor(private readonly pool: pg.Pool, url: string) {
    this.pinger = new PgPinger(url);
  }

  read<T>(work: Work<T>): Promise<T> {
    return driveAsync(work, (q) => runQuery(this.pool, q));
  }

  write<T>(work: Work<T>): Promise<T> {
    return inTransaction(this.pool, (c) => driveAsync(work, (q) => runQuery(c, q)));
  }

  bool = (v: boolean): boolean => v;
  list = (items: readonly unknown[]): unknown[] => [...items];
  inList = (column: string, param: string): string => `${column} = ANY(${param}::text[])`;
  listRows = (param: string): string => `unnest(${param}::text[]) AS l(value)`;
  unindexed = (column: string): string => column;

  violates(err: unknown, kind: ConstraintKind): boolean {
    if (kind === 'one_running_per_job') return (err as { constraint?: string } | null)?.constraint === 'executions_one_running_per_job';
    return (err as { code?: string } | null)?.code === CONSTRAINT_CODES[kind];
  }

  /** One statement: the execution and its schedule claim's record commit together. */
  withScheduleClaim(insert: string, n: number): string {
    return `WITH e AS (${insert}),
         c AS (UPDATE schedule_claims SET exec_id = (SELECT exec_id FROM e) WHERE job_id = $${n + 1} AND due_time = $${n + 2})
       SELECT * FROM e`;
  }

  /** The execution and, when it just ended, its open tasks and steps: one atomic statement. */
  async patchExecution(update: string, params: readonly unknown[]): Promise<boolean> {
    const close = (table: string) => `UPDATE ${table} SET
        status = CASE WHEN e.status IN ('cancelled', 'interrupted') THEN e.status ELSE 'cancelled' END,
        end_time = COALESCE(${table}.end_time, e.end_time)
      FROM e WHERE ${table}.exec_id = $1 AND ${table}.status IN ${ACTIVE} AND e.status NOT IN ${ACTIVE}`;
    const sql = `WITH e AS (${update}), t AS (${close('tasks')}), s AS (${close('steps')}) SELECT status FROM e`;
    return (await this.pool.query(sql, params as unknown[])).rows.length > 0;
  }

  async append(kind: RecordKind, execId: string, id: string, text: string, size: number, cap: number, crossing: () => Work<void>): Promise<void> {
    const { table, out, col } = OUTPUT_TABLES[kind];
    const fast = await this.pool.query(
      `WITH upd AS (
         UPDATE ${table} SET output_bytes = output_bytes + $4, output_chunks = output_chunks + 1
         WHERE exec_id = $1 AND ${col} = $2 AND NOT output_truncated AND output_bytes + $4 <= $5
         RETURNING output_chunks
       ), ins AS (INSERT INTO ${out} (exec_id, ${col}, n, chunk) SELECT $1, $2, output_chunks, $3 FROM upd)
       SELECT COUNT(*) AS written, set_config('synchronous_commit', 'off', true) AS async_commit FROM upd`,
      [execId, id, text, size, cap],
    );
    if (Number(fast.rows[0].written) > 0) return;
    await this.write(crossing());
  }

  /**
   * One INSERT … SELECT FROM unnest(<one array per column>) per 5000 rows:
   * a handful of round trips for 100,000 rows instead of one per row.
   */
  async insertMany(table: string, columns: readonly string[], bigint: ReadonlySet<string>, rows: readonly (readonly unknown[])[]): Promise<void> {
    const arrays = columns.map((c, i) => `$${i + 1}::${bigint.has(c) ? 'bigint[]' : 'text[]'}`);
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})`;
    await inTransaction(this.pool, async (c) => {
      for (let i = 0; i < rows.length; i += 5000) {
        const byColumn: unknown[][] = columns.map(() => []);
        for (const r of rows.slice(i, i + 5000)) r.forEach((v, k) => byColumn[k]!.push(v));
        await c.query(sql, byColumn);
      }
    });
  }

  /** Several daemons may share the database and nothing here learns of their commits cheaply. */
  dataVersion(): undefined {
    return undefined;
  }

  /** Never reusable, for the same reason. */
  changeToken(): undefined {
    return undefined;
  }

  ping(timeoutMs: number): Promise<number> {
    return this.pinger.ping(timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pinger.close();
    await this.pool.end();
  }
}

/** Connects, migrates and returns a PostgreSQL state store for a `postgres://` / `postgresql://` URL. */
export async function openPostgresStore(url: string, options: StateStoreOptions = {}): Promise<StateStore> {
  // A daemon's sessions carry its id: the fence trigger refuses their writes once it was taken over.
  const daemon = options.daemonId === undefined ? {} : { options: `-c service.daemon=${options.daemonId}` };
  // keepAlive: a state store that vanished without closing the connection is noticed.
  // connectionTimeoutMillis: a checkout fails (and its request with it) instead of waiting forever
  // while the database is unreachable.
  const pool = guardPool(new Pool({ connectionString: url, max: options.poolMax ?? 10, keepAlive: true, connectionTimeoutMillis: 10_000, ...daemon }));
  const dialect = new PostgresDialect(pool, url);
  try {
    await dialect.write(migrate('postgres'));
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof EngineError) throw err;
    throw new EngineError('connection', `cannot open the PostgreSQL state store: ${(err as Error).message}`, err);
  }
  return new SqlStore(dialect, options);
}
