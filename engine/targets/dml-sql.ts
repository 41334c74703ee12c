/**
 * SQL shapes that are identical on PostgreSQL and DuckDB (schema creation,
 * temp names, truncate, append, drops, incremental staging and merge), written once so the text the spec pins down has
 * one source. `T`, `TMP` and `COLS` are quoted here; `Q` is wrapped.
 */
import { quoteIdent, quoteRelation, quoteSchema, wrapQuery } from './relation.js';
import type { MergeStrategy, Relation, RelationKind, SchemaRef } from './target.js';

export function createSchemaSql(s: SchemaRef): string {
  return `CREATE SCHEMA IF NOT EXISTS ${quoteSchema(s)}`;
}

export function ctasSql(rel: Relation, query: string): string {
  return `CREATE TABLE ${quoteRelation(rel)} AS ${wrapQuery(query)}`;
}

/** `DROP TABLE|VIEW [IF EXISTS] T[ CASCADE]`. */
export function dropSql(kind: RelationKind, rel: Relation, cascade: boolean, ifExists = true): string {
  return `DROP ${kind === 'view' ? 'VIEW' : 'TABLE'}${ifExists ? ' IF EXISTS' : ''} ${quoteRelation(rel)}${cascade ? ' CASCADE' : ''}`;
}

/** The query's output columns without running it to completion. */
export function probeColumnsSql(query: string): string {
  return `SELECT * FROM ${wrapQuery(query)} AS _service_src LIMIT 0`;
}

export function columnList(columns: readonly string[]): string {
  return columns.map(quoteIdent).join(', ');
}

/** `INSERT INTO T (COLS) SELECT COLS FROM (\nQ\n) AS _service_src`. */
export function insertSelectSql(rel: Relation, columns: readonly string[], query: string): string {
  const cols = columnList(columns);
  return `INSERT INTO ${quoteRelation(rel)} (${cols}) SELECT ${cols} FROM ${wrapQuery(query)} AS _service_src`;
}

export function truncateSql(rel: Relation): string {
  return `TRUNCATE TABLE ${quoteRelation(rel)}`;
}

function keyMatch(keys: readonly string[], left: string, right: string): string {
  return keys.map((k) => `${left}.${quoteIdent(k)} = ${right}.${quoteIdent(k)}`).join(' AND ');
}

/**
 * Merge statements, without the surrounding `BEGIN`/`COMMIT`.
 * `columns` = TMP's columns; `keys` = the unique key columns.
 */
export function mergeSql(target: Relation, tmp: Relation, columns: readonly string[], keys: readonly string[], strategy: MergeStrategy): string[] {
  const T = quoteRelation(target);
  const TMP = quoteRelation(tmp);
  const cols = columnList(columns);
  const insertMissing = `INSERT INTO ${T} (${cols}) SELECT ${cols} FROM ${TMP} AS src WHERE NOT EXISTS (SELECT 1 FROM ${T} AS tgt WHERE ${keyMatch(keys, 'tgt', 'src')})`;
  switch (strategy) {
    case 'delete+insert':
      return [
        `DELETE FROM ${T} AS tgt WHERE EXISTS (SELECT 1 FROM ${TMP} AS src WHERE ${keyMatch(keys, 'src', 'tgt')})`,
        `INSERT INTO ${T} (${cols}) SELECT ${cols} FROM ${TMP}`,
      ];
    case 'update+insert': {
      const nonKeys = columns.filter((c) => !keys.includes(c));
      const update =
        nonKeys.length === 0
          ? []
          : [`UPDATE ${T} AS tgt SET ${nonKeys.map((c) => `${quoteIdent(c)} = src.${quoteIdent(c)}`).join(', ')} FROM ${TMP} AS src WHERE ${keyMatch(keys, 'tgt', 'src')}`];
      return [...update, insertMissing];
    }
    case 'insert':
      return [insertMissing];
  }
}
