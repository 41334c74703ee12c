/**
 * What a monitor needs from the database catalog: the tables and views of
 * some schemas (wildcard expansion of `schema.*`) and one table's columns. Both
 * targets answer the same information_schema query, constrained to the
 * current catalog (DuckDB's information_schema spans every attached
 * database; PostgreSQL's holds only the current one).
 */
import { quoteString } from '../targets/literal.js';
import type { TargetSession } from '../targets/target.js';
import type { SchemaColumn } from './metrics.js';

export interface CatalogTable {
  readonly schema: string;
  readonly name: string;
}

/** `schema.name` */
export const tableName = (t: CatalogTable): string => `${t.schema}.${t.name}`;

/** Tables and views of `schemas`, sorted by schema then name. */
export async function listTables(session: TargetSession, schemas: readonly string[]): Promise<CatalogTable[]> {
  if (schemas.length === 0) return [];
  const r = await session.query(
    `SELECT table_schema, table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema IN (${schemas.map(quoteString).join(', ')})`,
  );
  return r.rows
    .map((row) => ({ schema: String(row[0]), name: String(row[1]) }))
    .sort((a, b) => (a.schema === b.schema ? cmp(a.name, b.name) : cmp(a.schema, b.schema)));
}

/** The table's columns in ordinal order; empty when it does not exist (or has none). */
export async function tableColumns(session: TargetSession, t: CatalogTable): Promise<SchemaColumn[]> {
  const r = await session.query(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = ${quoteString(t.schema)} AND table_name = ${quoteString(t.name)} ORDER BY ordinal_position`,
  );
  return r.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) }));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
