/**
 * DuckDB catalog lookups. DuckDB's information_schema spans every
 * attached database, so the catalog is always constrained: the relation's
 * `database` when set, else the current one.
 */
import { quoteString } from '../literal.js';
import type { Column, Introspector } from '../session-parts.js';
import type { CatalogEntry, Relation, RelationKind } from '../target.js';

function catalogFilter(rel: Relation): { sql: string; params: string[] } {
  return rel.database !== undefined
    ? { sql: 'table_catalog = $3', params: [rel.schema, rel.name, rel.database] }
    : { sql: 'table_catalog = current_database()', params: [rel.schema, rel.name] };
}

export const duckdbIntrospector: Introspector = {
  async relationKind(driver, rel): Promise<RelationKind | null> {
    const f = catalogFilter(rel);
    const r = await driver.query(`SELECT table_type FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2 AND ${f.sql}`, f.params);
    const type = r.rows[0]?.[0];
    return type === 'VIEW' ? 'view' : type === undefined ? null : 'table';
  },
  /** Entries of the current database carry no `database` (as its relations do); others name theirs. */
  async catalog(driver, schemas): Promise<CatalogEntry[]> {
    if (schemas.length === 0) return [];
    const r = await driver.query(
      `SELECT table_catalog, table_schema, table_name, table_type, table_catalog = current_database() FROM information_schema.tables WHERE table_schema IN (${[...new Set(schemas.map((s) => quoteString(s.schema)))].join(', ')})`,
    );
    return r.rows.map((row) => ({
      ...(row[4] === true ? {} : { database: String(row[0]) }),
      schema: String(row[1]),
      name: String(row[2]),
      kind: row[3] === 'VIEW' ? ('view' as const) : ('table' as const),
    }));
  },
  async columns(driver, rel): Promise<Column[]> {
    const f = catalogFilter(rel);
    const r = await driver.query(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND ${f.sql} ORDER BY ordinal_position`,
      f.params,
    );
    return r.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) }));
  },
};
