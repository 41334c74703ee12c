/**
 * Replication modes on a database target, written once
 * over the `TableTarget` interface that PostgreSQL and DuckDB implement:
 *
 * - full-refresh: load a temp table and swap it in (`DROP` + `RENAME`),
 *   in one transaction; a failure or cancel before the swap leaves the
 *   previous table intact.
 * - truncate: keep the table (create it if missing), delete its rows and
 *   load, in one transaction.
 * - snapshot: append every source row with `_service_loaded_at`.
 * - incremental: first run (no target) is a full load; then rows with
 *   `update_key` above the target's maximum, upserted by `primary_key`
 *   through a staging table, or appended without one.
 * - backfill: rows whose `update_key` lies in the range, upserted.
 *
 * Loads into existing tables run inside one transaction, so a failure in
 * the middle leaves the pre-run rows as they were. Within it, rows go in
 * statements of at most `batch_limit` rows (default 50,000). Before such a load,
 * source columns the table lacks are added (`add_new_columns`) and, with
 * `adjust_column_type`, columns too narrow for the source are widened.
 */
import { EngineError } from '../errors.js';
import { mergeSql, type MergeSqlStrategy } from '../targets/merge-sql.js';
import { quoteIdent, quoteRelation, tempRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import { ddlType, type Dialect, type SourceColumn } from './column-types.js';
import type { Feed, LoadCount } from './feed.js';
import { alterTypeSql, compareTypes } from './adjust-column-type.js';
import { castColumnName } from './column-casing.js';
import type { StreamPlan } from './plan-types.js';
import { LOADED_AT_COLUMN, findColumn, loadedAtColumn } from './source-query.js';

/** The replication's `merge_strategy` names → the merge generator's strategies (one SQL for builds and streams). */
const MERGE_STRATEGY: Readonly<Record<NonNullable<StreamPlan['targetOptions']['merge_strategy']>, MergeSqlStrategy>> = {
  update_insert: 'update+insert',
  delete_insert: 'delete+insert',
  insert: 'insert',
  update: 'update',
};

export interface TargetTable {
  readonly kind: 'table' | 'view';
  readonly columns: readonly { readonly name: string; readonly type: string }[];
}

/** A column as loaded: its target name and DDL type. */
export interface LoadColumn {
  readonly name: string;
  readonly ddl: string;
}

export interface TableTarget {
  readonly dialect: Dialect;
  exec(sql: string): Promise<void>;
  /** Never throws; runs after a cancel (ROLLBACK, DROP of a temp table). */
  cleanup(sql: string): Promise<void>;
  describe(rel: Relation): Promise<TargetTable | null>;
  /** `MAX(column)` as text a CAST to the source column's type accepts; null for an empty table. */
  maxText(rel: Relation, column: string): Promise<string | null>;
  /** Merge staging: a temp table where the database has session-local ones. */
  staging(rel: Relation, runId: string): { readonly rel: Relation; readonly create: string };
  truncateSql(rel: Relation): string;
  /**
   * Loads `feed` into `rel` for `columns` (in feed order) inside the caller's
   * transaction, in statements of at most `batchLimit` rows each
   * (`target_options.batch_limit`; undefined when not set: the default
   * applies).
   */
  load(rel: Relation, columns: readonly LoadColumn[], feed: Feed, batchLimit: number | undefined): Promise<LoadCount>;
  /** After a staging load (PostgreSQL: ANALYZE, so the merge plans a hash join). */
  staged?(rel: Relation): Promise<void>;
}

export interface FeedRequest {
  readonly columns: readonly SourceColumn[];
  readonly after?: { readonly column: SourceColumn; readonly value: string };
  readonly range?: { readonly column: SourceColumn; readonly start: string; readonly end: string };
  readonly loadedAt?: string;
}

export interface PreparedSource {
  readonly dialect: Dialect;
  /** Selected source columns. */
  readonly columns: readonly SourceColumn[];
  feed(request: FeedRequest): Feed;
  /** Columns with every type concrete enough for DDL on `target` (unconstrained numerics measured). */
  concrete(columns: readonly SourceColumn[], target: Dialect): Promise<SourceColumn[]>;
}

interface Ctx {
  readonly t: TableTarget;
  readonly src: PreparedSource;
  readonly plan: StreamPlan;
  readonly rel: Relation;
  readonly log: (line: string) => void;
}

async function inTransaction<T>(t: TableTarget, work: () => Promise<T>): Promise<T> {
  await t.exec('BEGIN');
  try {
    const out = await work();
    await t.exec('COMMIT');
    return out;
  } catch (err) {
    await t.cleanup('ROLLBACK');
    throw err;
  }
}

function targetName(x: Ctx, col: SourceColumn): string {
  return castColumnName(col.name, x.plan.targetOptions.column_casing);
}

async function loadColumns(x: Ctx, cols: readonly SourceColumn[]): Promise<LoadColumn[]> {
  const concrete = await x.src.concrete(cols, x.t.dialect);
  return concrete.map((c) => ({ name: targetName(x, c), ddl: ddlType(x.src.dialect, x.t.dialect, c) }));
}

function createSql(rel: Relation, cols: readonly LoadColumn[], create = 'CREATE TABLE'): string {
  return `${create} ${quoteRelation(rel)} (${cols.map((c) => `${quoteIdent(c.name)} ${c.ddl}`).join(', ')})`;
}

function snapshotColumns(x: Ctx): SourceColumn[] {
  return x.plan.mode === 'snapshot' ? [...x.src.columns, loadedAtColumn(x.src.dialect)] : [...x.src.columns];
}

/** The feed for `cols`; in snapshot mode the trailing load-time column is computed by the source query. */
function feedFor(x: Ctx, cols: readonly SourceColumn[], extra: Omit<FeedRequest, 'columns'> = {}): Feed {
  const last = cols[cols.length - 1];
  const stamped = x.plan.mode === 'snapshot' && last?.name === LOADED_AT_COLUMN;
  const plain = stamped ? cols.slice(0, -1) : cols;
  return x.src.feed({ columns: plain, ...extra, ...(stamped ? { loadedAt: x.plan.loadedAt } : {}) });
}

/**
 * Temp table, then load, drop + rename in one transaction: one commit, so
 * DuckDB writes and syncs its file once instead of once per loaded batch.
 */
async function fullLoad(x: Ctx, existing: TargetTable | null, extra: Omit<FeedRequest, 'columns'> = {}): Promise<LoadCount> {
  const cols = snapshotColumns(x);
  const load = await loadColumns(x, cols);
  const tmp = tempRelation(x.rel, x.plan.runId);
  await x.t.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(tmp)}`);
  let count: LoadCount;
  try {
    await x.t.exec(createSql(tmp, load));
    count = await inTransaction(x.t, async () => {
      const loaded = await x.t.load(tmp, load, feedFor(x, cols, extra), x.plan.targetOptions.batch_limit);
      x.log(`loaded ${loaded.rows} rows into ${quoteRelation(tmp)}; swapping it in`);
      if (existing !== null) await x.t.exec(`DROP ${existing.kind === 'view' ? 'VIEW' : 'TABLE'} IF EXISTS ${quoteRelation(x.rel)}`);
      await x.t.exec(`ALTER TABLE ${quoteRelation(tmp)} RENAME TO ${quoteIdent(x.rel.name)}`);
      return loaded;
    });
  } catch (err) {
    await x.t.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(tmp)}`);
    throw err;
  }
  return count;
}

/**
 * The columns of an existing target for the source columns: matched by name
 * (exact, else case-insensitive); a missing column is added when
 * `add_new_columns` (default true), else left out of the load.
 */
async function reconcile(x: Ctx, table: TargetTable, cols: readonly SourceColumn[]): Promise<{ source: SourceColumn[]; load: LoadColumn[] }> {
  if (table.kind === 'view') throw new EngineError('node', `target ${quoteRelation(x.rel)} is a view; mode ${x.plan.mode} needs a table`);
  const concrete = await x.src.concrete(cols, x.t.dialect);
  const source: SourceColumn[] = [];
  const load: LoadColumn[] = [];
  for (const c of concrete) {
    const wanted = targetName(x, c);
    const found = table.columns.find((t) => t.name === wanted) ?? table.columns.find((t) => t.name.toLowerCase() === wanted.toLowerCase());
    const ddl = ddlType(x.src.dialect, x.t.dialect, c);
    if (found !== undefined) {
      if (x.plan.targetOptions.adjust_column_type === true) await adjustType(x, found, ddl);
      source.push(c);
      load.push({ name: found.name, ddl });
    } else if (x.plan.targetOptions.add_new_columns !== false) {
      await x.t.exec(`ALTER TABLE ${quoteRelation(x.rel)} ADD COLUMN ${quoteIdent(wanted)} ${ddl}`);
      x.log(`added column ${wanted} ${ddl} to ${quoteRelation(x.rel)}`);
      source.push(c);
      load.push({ name: wanted, ddl });
    } else {
      x.log(`column ${c.name} is not in ${quoteRelation(x.rel)} and add_new_columns is false: not loaded`);
    }
  }
  return { source, load };
}

/** `adjust_column_type: true`: widens the column when its type cannot hold the source's (adjust-column-type.ts). */
async function adjustType(x: Ctx, column: TargetTable['columns'][number], ddl: string): Promise<void> {
  const verdict = compareTypes(column.type, ddl);
  if (verdict === 'widen') {
    await x.t.exec(alterTypeSql(x.t.dialect, x.rel, column.name, ddl));
    x.log(`adjusted column ${column.name} of ${quoteRelation(x.rel)} from ${column.type} to ${ddl}`);
  } else if (verdict === 'unordered') {
    x.log(`column ${column.name} of ${quoteRelation(x.rel)} keeps its type ${column.type}: the source's ${ddl} is not a wider type of it`);
  }
}

async function ensureTable(x: Ctx, existing: TargetTable | null): Promise<TargetTable> {
  if (existing !== null) return existing;
  const cols = snapshotColumns(x);
  const load = await loadColumns(x, cols);
  await x.t.exec(createSql(x.rel, load));
  x.log(`created ${quoteRelation(x.rel)}`);
  return { kind: 'table', columns: load.map((c) => ({ name: c.name, type: c.ddl })) };
}

/** Load the feed into the target in one transaction, after deleting every row when `truncate`. */
async function loadInPlace(x: Ctx, table: TargetTable, truncate: boolean, extra: Omit<FeedRequest, 'columns'> = {}): Promise<LoadCount> {
  const { source, load } = await reconcile(x, table, snapshotColumns(x));
  return inTransaction(x.t, async () => {
    if (truncate) await x.t.exec(x.t.truncateSql(x.rel));
    return x.t.load(x.rel, load, feedFor(x, source, extra), x.plan.targetOptions.batch_limit);
  });
}

/** Stage the feed, then merge by primary key in one transaction. */
async function upsert(x: Ctx, table: TargetTable, extra: Omit<FeedRequest, 'columns'>): Promise<LoadCount> {
  const { source, load } = await reconcile(x, table, x.src.columns);
  const keys = x.plan.primaryKey.map((k) => {
    const col = findColumn(x.src.columns, k, 'primary_key');
    const i = source.findIndex((c) => c.name === col.name);
    if (i < 0) throw new EngineError('node', `primary_key column "${k}" is not loaded into ${quoteRelation(x.rel)}`);
    return load[i]!.name;
  });
  const staging = x.t.staging(x.rel, x.plan.runId);
  await x.t.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(staging.rel)}`);
  try {
    await x.t.exec(createSql(staging.rel, load, staging.create));
    const count = await x.t.load(staging.rel, load, feedFor(x, source, extra), x.plan.targetOptions.batch_limit);
    await x.t.staged?.(staging.rel);
    x.log(`staged ${count.rows} rows; merging by ${keys.join(', ')} (${x.plan.targetOptions.merge_strategy ?? 'update_insert'})`);
    await inTransaction(x.t, async () => {
      const strategy = MERGE_STRATEGY[x.plan.targetOptions.merge_strategy ?? 'update_insert'];
      const statements = mergeSql(x.rel, staging.rel, load.map((c) => c.name), keys, strategy);
      for (const s of statements) await x.t.exec(s);
    });
    return count;
  } finally {
    await x.t.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(staging.rel)}`);
  }
}

async function incremental(x: Ctx, existing: TargetTable | null): Promise<LoadCount> {
  if (existing === null) {
    x.log(`${quoteRelation(x.rel)} does not exist: first run loads every row`);
    return fullLoad(x, null);
  }
  let after: FeedRequest['after'];
  if (x.plan.updateKey !== undefined) {
    const column = findColumn(x.src.columns, x.plan.updateKey, 'update_key');
    const wanted = targetName(x, column);
    const found = existing.columns.find((c) => c.name === wanted) ?? existing.columns.find((c) => c.name.toLowerCase() === wanted.toLowerCase());
    if (found === undefined) throw new EngineError('node', `update_key column "${wanted}" is missing in ${quoteRelation(x.rel)}`);
    const max = await x.t.maxText(x.rel, found.name);
    x.log(max === null ? `${quoteRelation(x.rel)} is empty: reading every row` : `reading rows with ${column.name} > ${max}`);
    if (max !== null) after = { column, value: max };
  }
  const extra = after !== undefined ? { after } : {};
  if (x.plan.primaryKey.length > 0) return upsert(x, existing, extra);
  return loadInPlace(x, existing, false, extra);
}

async function backfill(x: Ctx, existing: TargetTable | null): Promise<LoadCount> {
  const table = await ensureTable(x, existing);
  const column = findColumn(x.src.columns, x.plan.updateKey!, 'update_key');
  const [start, end] = x.plan.range!;
  x.log(`reading rows with ${column.name} between ${start} and ${end}`);
  return upsert(x, table, { range: { column, start, end } });
}

/** Runs the plan's mode against a database target. */
export async function loadTable(t: TableTarget, src: PreparedSource, plan: StreamPlan, rel: Relation, log: (line: string) => void): Promise<LoadCount> {
  const x: Ctx = { t, src, plan, rel, log };
  let existing = await t.describe(rel);
  if (existing === null) await t.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(rel.schema)}`);
  if (plan.targetOptions.pre_sql !== undefined) {
    log('running pre_sql');
    await t.exec(plan.targetOptions.pre_sql);
    existing = await t.describe(rel);
  }
  let count: LoadCount;
  switch (plan.mode) {
    case 'full-refresh':
      count = await fullLoad(x, existing);
      break;
    case 'truncate':
      count = await loadInPlace(x, await ensureTable(x, existing), true);
      break;
    case 'snapshot':
      count = await loadInPlace(x, await ensureTable(x, existing), false);
      break;
    case 'incremental':
      count = await incremental(x, existing);
      break;
    case 'backfill':
      count = await backfill(x, existing);
      break;
  }
  if (plan.targetOptions.post_sql !== undefined) {
    log('running post_sql');
    await t.exec(plan.targetOptions.post_sql);
  }
  return count;
}
