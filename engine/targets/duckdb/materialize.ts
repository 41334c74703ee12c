/**
 * DuckDB full-refresh and view: `CREATE OR REPLACE` inside one
 * transaction, so the old relation stays until the new one exists. DuckDB
 * does not track view dependencies, so drops here never fail for that reason
 *
 */
import { dropSql } from '../dml-sql.js';
import { materializeFailed } from '../materialize-errors.js';
import { quoteRelation, wrapQuery } from '../relation.js';
import { relationKindOf, type FlowContext } from '../session-parts.js';
import { inTransaction } from '../table-modes.js';
import type { MaterializeOptions, Relation, Rows } from '../target.js';

export async function fullRefresh(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  try {
    const kind = await relationKindOf(ctx, rel, opts);
    const counts = await inTransaction(ctx.driver, [
      ...(kind === 'view' ? [dropSql('view', rel, opts.dropCascade)] : []),
      `CREATE OR REPLACE TABLE ${quoteRelation(rel)} AS ${wrapQuery(query)}`,
    ]);
    return { rows: counts[counts.length - 1] ?? 0 };
  } catch (err) {
    throw materializeFailed(opts.modelName, opts.mode ?? 'full-refresh', err);
  }
}

export async function view(ctx: FlowContext, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
  try {
    const kind = await relationKindOf(ctx, rel, opts);
    await inTransaction(ctx.driver, [
      ...(kind === 'table' ? [dropSql('table', rel, opts.dropCascade)] : []),
      `CREATE OR REPLACE VIEW ${quoteRelation(rel)} AS ${wrapQuery(query)}`,
    ]);
    return { rows: 0 };
  } catch (err) {
    throw materializeFailed(opts.modelName, opts.mode ?? 'view', err);
  }
}
