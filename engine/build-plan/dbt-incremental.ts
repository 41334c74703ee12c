/**
 * A dbt project's incremental model: the first run (or a full refresh)
 * builds the table from the model as rendered with is_incremental() false;
 * later runs stage the is_incremental() rendering and apply the strategy —
 * `append` inserts every row, `merge` updates matching keys and inserts the
 * rest, `delete+insert` replaces matching keys. `on_schema_change` decides
 * what new columns in the staged rows do: `ignore` drops them, `append_new_columns`
 * adds them to the table, `fail` stops the model naming them.
 */
import { EngineError } from '../errors.js';
import { quoteString } from '../targets/literal.js';
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { Relation, TargetSession } from '../targets/target.js';
import type { ModelTask, RunSettings } from './node-task.js';

/** A relation's columns and their types, in order (information_schema: the same on both targets). */
export async function relationColumns(session: TargetSession, rel: Relation): Promise<{ name: string; type: string }[]> {
  const catalog = rel.database ? ` AND table_catalog = ${quoteString(rel.database)}` : '';
  const r = await session.query(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ${quoteString(rel.schema)} AND table_name = ${quoteString(rel.name)}${catalog} ORDER BY ordinal_position`,
  );
  return r.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) }));
}

export async function runDbtIncremental(task: ModelTask, session: TargetSession, settings: RunSettings): Promise<number> {
  const run = task.dbt!;
  const name = task.name;
  const opts = { modelName: name, runId: settings.runId, dropCascade: task.config.drop_cascade, mode: 'incremental' };
  const kind = await session.relationKind(task.relation);
  const fullRefresh = settings.fullRefresh && run.fullRefresh !== false;
  if (kind !== 'table' || fullRefresh) {
    if (kind === 'view') await session.dropRelation(task.relation, 'view', true);
    return (await session.fullRefresh(task.relation, task.sql, opts)).rows;
  }
  const { tmp, rows } = await session.stage(task.relation, run.incrementalSql ?? task.sql, opts);
  try {
    const have = await relationColumns(session, task.relation);
    const staged = await relationColumns(session, tmp);
    const known = new Set(have.map((c) => c.name.toLowerCase()));
    const added = staged.filter((c) => !known.has(c.name.toLowerCase()));
    if (added.length > 0) {
      const names = added.map((c) => c.name).join(', ');
      if (run.onSchemaChange === 'fail') throw new EngineError('node', `model '${name}': on_schema_change is 'fail' and the new rows have column(s) the table lacks: ${names}`);
      for (const c of added) {
        if (run.onSchemaChange === 'append_new_columns') await session.exec(`ALTER TABLE ${quoteRelation(task.relation)} ADD COLUMN ${quoteIdent(c.name)} ${c.type}`);
        else await session.exec(`ALTER TABLE ${quoteRelation(tmp)} DROP COLUMN ${quoteIdent(c.name)}`);
      }
    }
    const keys = task.config.unique_key ?? [];
    if (run.strategy === 'append' || keys.length === 0) {
      if (run.strategy !== 'append') throw new EngineError('node', `model '${name}': incremental_strategy '${run.strategy}' needs a unique_key`);
      const cols = (await relationColumns(session, tmp)).map((c) => quoteIdent(c.name)).join(', ');
      await session.exec(`INSERT INTO ${quoteRelation(task.relation)} (${cols}) SELECT ${cols} FROM ${quoteRelation(tmp)}`);
      await session.dropRelation(tmp, 'table', false);
      return rows;
    }
  } catch (err) {
    await session.dropRelation(tmp, 'table', false).catch(() => {});
    throw err;
  }
  await session.merge(task.relation, tmp, task.config.unique_key!, run.strategy === 'merge' ? 'update+insert' : 'delete+insert', { modelName: name });
  return rows;
}
