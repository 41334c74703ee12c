/**
 * dbt snapshots (SCD type 2) on both targets with one SQL text. The first
 * run creates the table from the query plus dbt's columns `dbt_scd_id`,
 * `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`. Later runs stage the
 * query and, in one transaction, close the current version of every
 * changed key (`timestamp`: its updated_at moved forward; `check`: one of
 * the check columns differs), insert a new current version for changed
 * and new keys, and with hard deletes invalidated close keys that vanished.
 */
import { EngineError } from '../errors.js';
import { quoteString } from '../targets/literal.js';
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { Relation, TargetSession } from '../targets/target.js';
import { relationColumns } from './dbt-incremental.js';
import type { DbtSnapshotSpec, RunSettings, WireModelTask } from './node-task.js';

const SCD_COLUMNS = ['dbt_scd_id', 'dbt_updated_at', 'dbt_valid_from', 'dbt_valid_to'];

function keyMatch(keys: readonly string[], a: string, b: string): string {
  return keys.map((k) => `${a}.${quoteIdent(k)} = ${b}.${quoteIdent(k)}`).join(' AND ');
}

function scdId(keys: readonly string[], alias: string, validFrom: string): string {
  const parts = [...keys.map((k) => `coalesce(cast(${alias}.${quoteIdent(k)} as varchar), '')`), `coalesce(cast(${validFrom} as varchar), '')`];
  return `md5(${parts.join(` || '|' || `)})`;
}

export async function runDbtSnapshot(task: WireModelTask, session: TargetSession, settings: RunSettings): Promise<number> {
  const spec = task.dbt!.snapshot!;
  const T = quoteRelation(task.relation);
  const now = `cast(${quoteString(new Date().toISOString().replace('T', ' ').replace('Z', ''))} as timestamp)`;
  const validFrom = (alias: string) => (spec.strategy === 'timestamp' ? `${alias}.${quoteIdent(spec.updatedAt!)}` : now);
  const kind = await session.relationKind(task.relation);
  if (kind === null) {
    const vf = validFrom('sbq');
    const sql = `SELECT sbq.*, ${scdId(spec.uniqueKey, 'sbq', vf)} AS dbt_scd_id, ${vf} AS dbt_updated_at, ${vf} AS dbt_valid_from, nullif(${vf}, ${vf}) AS dbt_valid_to FROM (\n${task.sql}\n) AS sbq`;
    return (await session.fullRefresh(task.relation, sql, { modelName: task.name, runId: settings.runId, dropCascade: false, mode: 'snapshot' })).rows;
  }
  if (kind === 'view') throw new EngineError('node', `snapshot '${task.name}': ${task.relation.schema}.${task.relation.name} is a view, not a snapshot table`);
  const { tmp } = await session.stage(task.relation, task.sql, { modelName: task.name, runId: settings.runId, dropCascade: false });
  try {
    return await applyChanges(task, session, tmp, spec, T, now, validFrom);
  } finally {
    await session.dropRelation(tmp, 'table', false).catch(() => {});
  }
}

async function applyChanges(
  task: WireModelTask,
  session: TargetSession,
  tmp: Relation,
  spec: DbtSnapshotSpec,
  T: string,
  now: string,
  validFrom: (alias: string) => string,
): Promise<number> {
  const staged = (await relationColumns(session, tmp)).map((c) => c.name);
  const have = await relationColumns(session, task.relation);
  const known = new Set(have.map((c) => c.name.toLowerCase()));
  for (const k of spec.uniqueKey) if (!staged.some((c) => c.toLowerCase() === k.toLowerCase())) throw new EngineError('node', `snapshot '${task.name}': unique_key column '${k}' is not in the query`);
  const TMP = quoteRelation(tmp);
  const checkCols = spec.strategy === 'check' ? (spec.checkCols === 'all' ? staged.filter((c) => !spec.uniqueKey.includes(c)) : spec.checkCols) : [];
  const changed =
    spec.strategy === 'timestamp'
      ? `src.${quoteIdent(spec.updatedAt!)} > snap.dbt_updated_at`
      : `(${checkCols.map((c) => (known.has(c.toLowerCase()) ? `src.${quoteIdent(c)} IS DISTINCT FROM snap.${quoteIdent(c)}` : `src.${quoteIdent(c)} IS NOT NULL`)).join(' OR ') || 'false'})`;
  const statements: string[] = [];
  // New columns in the query join the table (dbt does the same).
  for (const c of (await relationColumns(session, tmp)).filter((x) => !known.has(x.name.toLowerCase()))) statements.push(`ALTER TABLE ${T} ADD COLUMN ${quoteIdent(c.name)} ${c.type}`);
  statements.push(
    `UPDATE ${T} AS snap SET dbt_valid_to = ${validFrom('src')} FROM ${TMP} AS src WHERE ${keyMatch(spec.uniqueKey, 'snap', 'src')} AND snap.dbt_valid_to IS NULL AND ${changed}`,
  );
  if (spec.invalidateHardDeletes) {
    statements.push(`UPDATE ${T} AS snap SET dbt_valid_to = ${now} WHERE snap.dbt_valid_to IS NULL AND NOT EXISTS (SELECT 1 FROM ${TMP} AS src WHERE ${keyMatch(spec.uniqueKey, 'src', 'snap')})`);
  }
  const cols = staged.map(quoteIdent);
  const vf = validFrom('src');
  const insert = `INSERT INTO ${T} (${[...cols, ...SCD_COLUMNS].join(', ')}) SELECT ${cols.map((c) => `src.${c}`).join(', ')}, ${scdId(spec.uniqueKey, 'src', vf)}, ${vf}, ${vf}, NULL FROM ${TMP} AS src WHERE NOT EXISTS (SELECT 1 FROM ${T} AS snap WHERE ${keyMatch(spec.uniqueKey, 'snap', 'src')} AND snap.dbt_valid_to IS NULL)`;
  await session.exec('BEGIN');
  try {
    for (const s of statements) await session.exec(s);
    const { rows } = await session.exec(insert);
    await session.exec('COMMIT');
    return rows;
  } catch (err) {
    await session.exec('ROLLBACK').catch(() => {});
    throw EngineError.wrap(`snapshot '${task.name}' failed`, err, 'node');
  }
}
