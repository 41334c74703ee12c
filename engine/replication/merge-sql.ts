/**
 * Upserts from a staging table into the target (replication's incremental and
 * backfill, `target_options.merge_strategy`), as portable SQL both
 * PostgreSQL and DuckDB run: no unique constraint is needed on the target,
 * and keys compare with `=` so PostgreSQL can hash-join. The caller wraps
 * the statements in one transaction.
 */
import type { MERGE_STRATEGIES } from '../jobs/replication-model.js';
import { quoteIdent } from '../targets/relation.js';

export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

export interface MergeSpec {
  /** Quoted target relation. */
  readonly target: string;
  /** Quoted staging relation. */
  readonly staging: string;
  /** Target column names, staging has the same. */
  readonly columns: readonly string[];
  /** Target names of the primary key columns. */
  readonly keys: readonly string[];
  readonly strategy: MergeStrategy;
}

export function mergeStatements(m: MergeSpec): string[] {
  const match = m.keys.map((k) => `t.${quoteIdent(k)} = s.${quoteIdent(k)}`).join(' AND ');
  const cols = m.columns.map(quoteIdent).join(', ');
  const sCols = m.columns.map((c) => `s.${quoteIdent(c)}`).join(', ');
  const keySet = new Set(m.keys);
  const rest = m.columns.filter((c) => !keySet.has(c));
  const update = rest.length === 0 ? [] : [`UPDATE ${m.target} AS t SET ${rest.map((c) => `${quoteIdent(c)} = s.${quoteIdent(c)}`).join(', ')} FROM ${m.staging} AS s WHERE ${match}`];
  const insertMissing = `INSERT INTO ${m.target} (${cols}) SELECT ${sCols} FROM ${m.staging} AS s WHERE NOT EXISTS (SELECT 1 FROM ${m.target} AS t WHERE ${match})`;
  switch (m.strategy) {
    case 'update_insert':
      return [...update, insertMissing];
    case 'delete_insert':
      return [
        `DELETE FROM ${m.target} WHERE EXISTS (SELECT 1 FROM ${m.staging} AS s WHERE ${m.keys.map((k) => `${m.target}.${quoteIdent(k)} = s.${quoteIdent(k)}`).join(' AND ')})`,
        `INSERT INTO ${m.target} (${cols}) SELECT ${sCols} FROM ${m.staging} AS s`,
      ];
    case 'insert':
      return [insertMissing];
    case 'update':
      return update;
  }
}

/** `target_options.column_casing` applied to one source column name. */
export function castColumnName(name: string, casing: 'source' | 'lower' | 'upper' | 'snake' | undefined): string {
  switch (casing ?? 'source') {
    case 'lower':
      return name.toLowerCase();
    case 'upper':
      return name.toUpperCase();
    case 'snake':
      return name
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
        .replace(/[^A-Za-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .toLowerCase();
    default:
      return name;
  }
}
