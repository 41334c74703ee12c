/**
 * SQL shapes that are identical on PostgreSQL and DuckDB (schemas, CTAS,
 * drops, truncate, append), written once so the text has one source (the
 * incremental merge is merge-sql.ts). `T`, `TMP` and `COLS` are quoted
 * here; `Q` is wrapped.
 */
import { quoteIdent, quoteRelation, quoteSchema, wrapQuery } from './relation.js';
import type { Relation, RelationKind, SchemaRef } from './target.js';

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
