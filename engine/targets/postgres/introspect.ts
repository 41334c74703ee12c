/** PostgreSQL catalog lookups: information_schema of the current database. */
import type { Column, Introspector } from '../session-parts.js';
import type { RelationKind } from '../target.js';

const KIND_SQL = 'SELECT table_type FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2';
const COLUMNS_SQL =
  'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position';

export const postgresIntrospector: Introspector = {
  async relationKind(driver, rel): Promise<RelationKind | null> {
    const r = await driver.query(KIND_SQL, [rel.schema, rel.name]);
    const type = r.rows[0]?.[0];
    return type === 'VIEW' ? 'view' : type === undefined ? null : 'table';
  },
  async columns(driver, rel): Promise<Column[]> {
    const r = await driver.query(COLUMNS_SQL, [rel.schema, rel.name]);
    return r.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) }));
  },
};
