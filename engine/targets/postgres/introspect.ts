/** PostgreSQL catalog lookups: information_schema of the current database. */
import { quoteString } from '../literal.js';
import type { Column, Introspector } from '../session-parts.js';
import type { CatalogEntry, RelationKind } from '../target.js';

const KIND_SQL = 'SELECT table_type FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2';
const CATALOG_SQL = 'SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema IN';
const COLUMNS_SQL =
  'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position';

export const postgresIntrospector: Introspector = {
  async relationKind(driver, rel): Promise<RelationKind | null> {
    const r = await driver.query(KIND_SQL, [rel.schema, rel.name]);
    const type = r.rows[0]?.[0];
    return type === 'VIEW' ? 'view' : type === undefined ? null : 'table';
  },
  async catalog(driver, schemas): Promise<CatalogEntry[]> {
    if (schemas.length === 0) return [];
    const r = await driver.query(`${CATALOG_SQL} (${[...new Set(schemas.map((s) => quoteString(s.schema)))].join(', ')})`);
    return r.rows.map((row) => ({ schema: String(row[0]), name: String(row[1]), kind: row[2] === 'VIEW' ? 'view' : 'table' }));
  },
  async columns(driver, rel): Promise<Column[]> {
    const r = await driver.query(COLUMNS_SQL, [rel.schema, rel.name]);
    return r.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) }));
  },
};
