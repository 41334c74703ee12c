/**
 * PostgreSQL full-refresh and view.
 *
 * Full-refresh builds the new table under a temp name first and swaps it in
 * with one transaction, so readers see the old or the new table and a failed
 * build leaves the old one intact. Views are replaced in place first, which
 * keeps dependent views valid; only a column change (SQLSTATE 42P16) falls
 * back to drop-and-create, inside the same transaction via a savepoint.
 */
import { ctasSql, dropSql } from '../dml-sql.js';
import { dropBlocked, materializeFailed, renameFailed } from '../materialize-errors.js';
import { quoteIdent, quoteRelation, tempRelation, wrapQuery } from '../relation.js';
import { relationKindOf, type FlowContext } from '../session-parts.js';
import { isCancelled, sqlStateOf } from '../sql-driver.js';
import { DEPENDENT_OBJECTS, inTransaction } from '../table-modes.js';
import type { MaterializeOptions, Relation, RelationKind, Rows } from '../target.js';
import type { PostgresDriver } from './driver.js';

/** SQLSTATE raised when CREATE OR REPLACE VIEW would remove, rename or retype a column. */
const VIEW_COLUMNS_CHANGED = '42P16';

/**
 * Step 2: `BEGIN; [DROP VIEW T;] DROP TABLE IF EXISTS T; ALTER TABLE TMP
 * RENAME TO "<name>"; COMMIT;`. A dependency error drops TMP and reports the
 * drop message; any other failure keeps TMP for inspection.
 */
export async function swapIntoPlace(ctx: FlowContext<PostgresDriver>, rel: Relation, tmp: Relation, cascade: boolean): Promise<void> {
  let kind: RelationKind | null = null;
  try {
    kind = await ctx.introspect.relationKind(ctx.driver, rel); // fresh: the catalog read may be stale here
    await inTransaction(ctx.driver, [
      ...(kind === 'view' ? [dropSql('view', rel, cascade, false)] : []),
      dropSql('table', rel, cascade),
      `ALTER TABLE ${quoteRelation(tmp)} RENAME TO ${quoteIdent(rel.name)}`,
    ]);
  } catch (err) {
    if (!isCancelled(err) && sqlStateOf(err) === DEPENDENT_OBJECTS && kind === 'table' && (await sameColumns(ctx, rel, tmp))) {
      await refillInPlace(ctx, rel, tmp);
      return;
    }
    if (isCancelled(err) || sqlStateOf(err) === DEPENDENT_OBJECTS) {
      await ctx.driver.cleanup(dropSql('table', tmp, false));
      if (isCancelled(err)) throw err;
      throw dropBlocked(kind === 'view' ? 'view' : 'table', rel);
    }
    throw renameFailed(rel, tmp, err);
  }
}

const COLUMNS_SQL = `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
  WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`;

/** Same column names and types in the same order: the new rows fit the old table. */
async function sameColumns(ctx: FlowContext<PostgresDriver>, rel: Relation, tmp: Relation): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([rel, tmp].map((r) => ctx.driver.query(COLUMNS_SQL, [quoteRelation(r)])));
    return JSON.stringify(a!.rows) === JSON.stringify(b!.rows);
  } catch {
    return false;
  }
}

/**
 * [ext] When views depend on the table and its shape is unchanged, replace
 * the rows instead of the table: `BEGIN; TRUNCATE T; INSERT INTO T SELECT *
 * FROM TMP; COMMIT;` keeps the dependent views valid and is still atomic for
 * readers (TRUNCATE holds its lock until COMMIT). dbt would drop the views
 * with CASCADE; re-running a project must not fail or lose them.
 */
async function refillInPlace(ctx: FlowContext<PostgresDriver>, rel: Relation, tmp: Relation): Promise<void> {
  try {
    await inTransaction(ctx.driver, [`TRUNCATE TABLE ${quoteRelation(rel)}`, `INSERT INTO ${quoteRelation(rel)} SELECT * FROM ${quoteRelation(tmp)}`]);
  } catch (err) {
    if (isCancelled(err)) {
      await ctx.driver.cleanup(dropSql('table', tmp, false));
      throw err;
    }
    throw renameFailed(rel, tmp, err); // like a failed rename: TMP is kept for inspection
  }
  await ctx.driver.cleanup(dropSql('table', tmp, false));
}

/**
 * SQLSTATEs the swap's own statements raise (dependent objects, not a
 * table, name taken, not the owner, lock not available, deadlock): after one
 * of these the two-step path runs, which tells them apart exactly as the
 * spec lays out (refill in place, temp dropped or left for inspection).
 * Anything else came from the query.
 */
const SWAP_STATES = new Set([DEPENDENT_OBJECTS, '42809', '42P07', '42501', '55P03', '40P01']);

/**
 * Full-refresh in one round trip: `BEGIN; CREATE TABLE TMP AS (Q);
 * [DROP VIEW T;] DROP TABLE IF EXISTS T; ALTER TABLE TMP RENAME TO "<name>";
 * COMMIT;` as one multi-statement query — the documented two steps, sent
 * together (a trivial model spent two of its three round trips on the
 * relation probe and the separate swap). Readers still see the old or the
 * new table; any failure rolls back, so the target is unchanged and TMP never
 * existed. A failure of the swap's statements re-runs the two-step path for
 * the documented handling of that case.
 */
export async function fullRefresh(ctx: FlowContext<PostgresDriver>, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  const tmp = tempRelation(rel, opts.runId);
  const kind = await relationKindOf(ctx, rel, opts);
  try {
    const counts = await inTransaction(ctx.driver, [
      ctasSql(tmp, query),
      // IF EXISTS: the run's catalog read may be stale (a seed's drop cascade removes the views after it).
      ...(kind === 'view' ? [dropSql('view', rel, opts.dropCascade)] : []),
      dropSql('table', rel, opts.dropCascade),
      `ALTER TABLE ${quoteRelation(tmp)} RENAME TO ${quoteIdent(rel.name)}`,
    ]);
    return { rows: counts[0] ?? 0 };
  } catch (err) {
    if (isCancelled(err)) throw err;
    if (!SWAP_STATES.has(sqlStateOf(err) ?? '')) throw materializeFailed(opts.modelName, opts.mode ?? 'full-refresh', err);
  }
  return twoStepFullRefresh(ctx, rel, query, opts);
}

/** The documented two steps, one round trip each: CTAS, then the swap transaction (swapIntoPlace). */
async function twoStepFullRefresh(ctx: FlowContext<PostgresDriver>, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  const tmp = tempRelation(rel, opts.runId);
  let rows: number;
  try {
    rows = (await ctx.driver.query(ctasSql(tmp, query))).count;
  } catch (err) {
    await ctx.driver.cleanup(dropSql('table', tmp, false));
    throw materializeFailed(opts.modelName, opts.mode ?? 'full-refresh', err);
  }
  await swapIntoPlace(ctx, rel, tmp, opts.dropCascade);
  return { rows };
}

export async function view(ctx: FlowContext<PostgresDriver>, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  const T = quoteRelation(rel);
  const mode = opts.mode ?? 'view';
  const kind = await relationKindOf(ctx, rel, opts);
  const replace = [
    'BEGIN',
    ...(kind === 'table' ? [dropSql('table', rel, opts.dropCascade)] : []),
    'SAVEPOINT v',
    `CREATE OR REPLACE VIEW ${T} AS ${wrapQuery(query)}`,
    'COMMIT',
  ];
  try {
    await ctx.driver.batch(replace);
    return { rows: 0 };
  } catch (err) {
    if (sqlStateOf(err) !== VIEW_COLUMNS_CHANGED) {
      await ctx.driver.cleanup('ROLLBACK');
      if (sqlStateOf(err) === DEPENDENT_OBJECTS) throw dropBlocked('table', rel);
      throw materializeFailed(opts.modelName, mode, err);
    }
  }
  // The failed CREATE OR REPLACE left the transaction aborted after the savepoint.
  const recreate = ['ROLLBACK TO SAVEPOINT v', dropSql('view', rel, opts.dropCascade, false), `CREATE VIEW ${T} AS ${wrapQuery(query)}`, 'COMMIT'];
  try {
    await ctx.driver.batch(recreate);
    return { rows: 0 };
  } catch (err) {
    await ctx.driver.cleanup('ROLLBACK');
    if (sqlStateOf(err) === DEPENDENT_OBJECTS) throw dropBlocked('view', rel);
    throw materializeFailed(opts.modelName, mode, err);
  }
}
