/**
 * The incremental merge: upserting a staged table TMP into T, as SQL both
 * PostgreSQL and DuckDB run — no unique constraint needed on T, keys
 * compared with `=` (so PostgreSQL can hash-join). One generator for build
 * models (incremental merges) and replication streams (`merge_strategy`); the
 * caller wraps the statements in one transaction and drops TMP after.
 */
import { quoteIdent, quoteRelation } from './relation.js';
import type { MergeStrategy, Relation } from './target.js';

/** The build's strategies, plus `update` (replication: update matching rows, insert nothing). */
export type MergeSqlStrategy = MergeStrategy | 'update';

function keyMatch(keys: readonly string[], left: string, right: string): string {
  return keys.map((k) => `${left}.${quoteIdent(k)} = ${right}.${quoteIdent(k)}`).join(' AND ');
}

/**
 * Merge statements, without the surrounding `BEGIN`/`COMMIT`.
 * `columns` = TMP's columns (T has each); `keys` = the unique key columns.
 */
export function mergeSql(target: Relation, tmp: Relation, columns: readonly string[], keys: readonly string[], strategy: MergeSqlStrategy): string[] {
  const T = quoteRelation(target);
  const TMP = quoteRelation(tmp);
  const cols = columns.map(quoteIdent).join(', ');
  const nonKeys = columns.filter((c) => !keys.includes(c));
  const update =
    nonKeys.length === 0 ? [] : [`UPDATE ${T} AS tgt SET ${nonKeys.map((c) => `${quoteIdent(c)} = src.${quoteIdent(c)}`).join(', ')} FROM ${TMP} AS src WHERE ${keyMatch(keys, 'tgt', 'src')}`];
  const insertMissing = `INSERT INTO ${T} (${cols}) SELECT ${cols} FROM ${TMP} AS src WHERE NOT EXISTS (SELECT 1 FROM ${T} AS tgt WHERE ${keyMatch(keys, 'tgt', 'src')})`;
  switch (strategy) {
    case 'delete+insert':
      return [`DELETE FROM ${T} AS tgt WHERE EXISTS (SELECT 1 FROM ${TMP} AS src WHERE ${keyMatch(keys, 'src', 'tgt')})`, `INSERT INTO ${T} (${cols}) SELECT ${cols} FROM ${TMP}`];
    case 'update+insert':
      return [...update, insertMissing];
    case 'insert':
      return [insertMissing];
    case 'update':
      return update;
  }
}
