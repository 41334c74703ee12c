/**
 * Source catalogs for wildcard expansion: the tables and views
 * of a schema on PostgreSQL or DuckDB, without this service's own temp
 * tables, and the files of a file connection.
 */
import type { DuckSession } from './duck-session.js';
import type { PgSession } from './pg-session.js';

const TMP_PREFIX = '\\_service\\_tmp\\_%';

export async function pgTables(s: PgSession, schema: string): Promise<string[]> {
  const r = await s.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname NOT LIKE $2 ORDER BY 1`,
    [schema, TMP_PREFIX],
  );
  return r.rows.map((x) => x.relname);
}

export async function duckTables(s: DuckSession, schema: string): Promise<string[]> {
  const rows = await s.rows(
    `SELECT table_name FROM information_schema.tables
      WHERE table_catalog = current_database() AND table_schema = '${schema.replace(/'/g, "''")}'
        AND table_name NOT LIKE '${TMP_PREFIX}' ESCAPE '\\' ORDER BY 1`,
  );
  return rows.map((r) => String(r[0]));
}
