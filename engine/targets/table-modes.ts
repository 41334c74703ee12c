/**
 * Materialization flows whose SQL is the same on every target: truncate
 * Append, incremental stage and merge, drops.
 *
 * Column matching is by name: every column the query produces must
 * exist in the target; extra target columns receive NULL/defaults. Temp
 * tables are dropped on success and failure alike.
 */
import { EngineError } from '../errors.js';
import { createSchemaSql, ctasSql, dropSql, insertSelectSql, probeColumnsSql, truncateSql } from './dml-sql.js';
import { mergeSql } from './merge-sql.js';
import { dropBlocked, materializeFailed, mergeFailed, mergeSqlFailed, missingColumns, stageFailed, wrapFailure } from './materialize-errors.js';
import { quoteSchema, relationText, tempRelation } from './relation.js';
import { relationKindOf, type FlowContext } from './session-parts.js';
import { isCancelled, sqlStateOf, type SqlDriver } from './sql-driver.js';
import type { MaterializeOptions, MergeOptions, MergeStrategy, Relation, RelationKind, Rows, SchemaRef } from './target.js';

/** PostgreSQL SQLSTATE for "cannot drop because other objects depend on it". */
export const DEPENDENT_OBJECTS = '2BP01';

/**
 * `BEGIN; …; COMMIT;` in one batch; returns the counts of the inner
 * statements. On failure the transaction is rolled back before rethrowing.
 */
export async function inTransaction(driver: SqlDriver, statements: readonly string[]): Promise<number[]> {
  try {
    const counts = await driver.batch(['BEGIN', ...statements, 'COMMIT']);
    return counts.slice(1, -1);
  } catch (err) {
    await driver.cleanup('ROLLBACK');
    throw err;
  }
}

/** Missing relation, or a view to replace: `[DROP VIEW T;] CREATE TABLE T AS (Q)`. */
async function createFromQuery(ctx: FlowContext, rel: Relation, query: string, kind: RelationKind | null, opts: MaterializeOptions, mode: string): Promise<Rows> {
  try {
    if (kind === 'view') {
      const [, rows] = await inTransaction(ctx.driver, [dropSql('view', rel, opts.dropCascade, false), ctasSql(rel, query)]);
      return { rows: rows ?? 0 };
    }
    return { rows: (await ctx.driver.query(ctasSql(rel, query))).count };
  } catch (err) {
    if (sqlStateOf(err) === DEPENDENT_OBJECTS) throw dropBlocked('view', rel);
    throw materializeFailed(opts.modelName, opts.mode ?? mode, err);
  }
}

/** Each of `columns` must exist in `rel`. */
async function requireColumns(ctx: FlowContext, rel: Relation, columns: readonly string[], modelName: string): Promise<void> {
  const present = new Set((await ctx.introspect.columns(ctx.driver, rel)).map((c) => c.name));
  const missing = columns.filter((c) => !present.has(c));
  if (missing.length > 0) throw missingColumns(modelName, missing, rel);
}

async function insertIntoTable(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions, mode: 'truncate' | 'append'): Promise<Rows> {
  let columns: readonly string[];
  try {
    columns = (await ctx.driver.query(probeColumnsSql(query))).columns;
  } catch (err) {
    throw materializeFailed(opts.modelName, opts.mode ?? mode, err);
  }
  await requireColumns(ctx, rel, columns, opts.modelName);
  try {
    if (mode === 'truncate') {
      const [, inserted] = await inTransaction(ctx.driver, [truncateSql(rel), insertSelectSql(rel, columns, query)]);
      return { rows: inserted ?? 0 };
    }
    return { rows: (await ctx.driver.query(insertSelectSql(rel, columns, query))).count };
  } catch (err) {
    throw materializeFailed(opts.modelName, opts.mode ?? mode, err);
  }
}

/** Truncate: create when missing (or a view), else truncate and insert in one transaction. */
export async function truncateMode(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  const kind = await relationKindOf(ctx, rel, opts);
  if (kind !== 'table') return createFromQuery(ctx, rel, query, kind, opts, 'truncate');
  return insertIntoTable(ctx, rel, query, opts, 'truncate');
}

/** Append: create when missing (or a view), else insert by column name. */
export async function appendMode(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  const kind = await relationKindOf(ctx, rel, opts);
  if (kind !== 'table') return createFromQuery(ctx, rel, query, kind, opts, 'append');
  return insertIntoTable(ctx, rel, query, opts, 'append');
}

/** Stage: `CREATE TABLE TMP AS (Q)`; TMP is dropped when this fails. */
export async function stageQuery(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions): Promise<{ tmp: Relation; rows: number }> {
  const tmp = tempRelation(rel, opts.runId);
  try {
    return { tmp, rows: (await ctx.driver.query(ctasSql(tmp, query))).count };
  } catch (err) {
    await ctx.driver.cleanup(dropSql('table', tmp, false));
    throw stageFailed(opts.modelName, err);
  }
}

/** Merge of TMP into T in one transaction; TMP is dropped afterwards either way. */
export async function mergeStaged(ctx: FlowContext, rel: Relation, tmp: Relation, keys: readonly string[], strategy: MergeStrategy, opts: MergeOptions): Promise<void> {
  try {
    const columns = (await ctx.introspect.columns(ctx.driver, tmp)).map((c) => c.name);
    const missingKeys = keys.filter((k) => !columns.includes(k));
    if (keys.length === 0 || missingKeys.length > 0) {
      const why = keys.length === 0 ? 'no unique_key columns given' : `unique_key column(s) ${missingKeys.join(', ')} not in the query's output`;
      throw mergeSqlFailed(opts.modelName, new EngineError('node', why));
    }
    await requireColumns(ctx, rel, columns, opts.modelName);
    try {
      await inTransaction(ctx.driver, mergeSql(rel, tmp, columns, keys, strategy));
    } catch (err) {
      throw mergeFailed(opts.modelName, err);
    }
  } finally {
    await ctx.driver.cleanup(dropSql('table', tmp, false));
  }
}

/** Drop; a dependency error without cascade is the documented drop message. */
export async function dropRelation(ctx: FlowContext, rel: Relation, kind: RelationKind, cascade: boolean): Promise<void> {
  try {
    await ctx.driver.query(dropSql(kind, rel, cascade));
  } catch (err) {
    if (sqlStateOf(err) === DEPENDENT_OBJECTS) throw dropBlocked(kind, rel);
    throw wrapFailure(`could not drop ${kind} ${relationText(rel)}`, err);
  }
}

const ALREADY_EXISTS = new Set(['42P06', '23505']);

/** Each distinct schema once; "already exists" (a concurrent creator) is not an error. */
export async function createSchemas(ctx: FlowContext, schemas: readonly SchemaRef[]): Promise<void> {
  const seen = new Set<string>();
  for (const s of schemas) {
    const key = quoteSchema(s);
    if (seen.has(key)) continue;
    seen.add(key);
    try {
      await ctx.driver.query(createSchemaSql(s));
    } catch (err) {
      if (isCancelled(err)) throw err;
      const state = sqlStateOf(err);
      if ((state !== undefined && ALREADY_EXISTS.has(state)) || /already exists/i.test((err as Error).message)) continue;
      throw wrapFailure(`could not create schema ${[s.database, s.schema].filter(Boolean).join('.')}`, err);
    }
  }
}
