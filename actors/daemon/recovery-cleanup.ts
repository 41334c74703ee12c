/**
 * What a crashed daemon leaves in the databases of its executions, cleaned
 * up by the next start (docs/daemon.md, "Restart recovery"): the backends of
 * the executions it marks interrupted (found by their session tag,
 * engine/targets/session-tag.ts) are terminated, and their temporary tables
 * (found by name, engine/targets/temp-sweep.ts) dropped. Every PostgreSQL
 * connection of the executions' projects is visited once; one that cannot be
 * reached is reported and skipped — recovery never blocks the start.
 */
import { Client } from '../../engine/targets/postgres/pg-module.js';
import type { ConnectionRegistry, PostgresConnection } from '../../engine/connections/index.js';
import { errorChain } from '../../engine/errors.js';
import type { Logger } from '../../engine/log.js';
import { clientConfig } from '../../engine/targets/postgres/target.js';
import { quoteIdent } from '../../engine/targets/relation.js';
import { sessionTag } from '../../engine/targets/session-tag.js';
import { tempTablePattern } from '../../engine/targets/temp-sweep.js';

export interface Interrupted {
  readonly exec_id: string;
  readonly project_id: string;
}

export interface CleanupCounts {
  readonly backends: number;
  readonly tables: number;
}

async function cleanOne(conn: PostgresConnection, execIds: readonly string[]): Promise<CleanupCounts> {
  const client = new Client({ ...clientConfig(conn, 3000), application_name: 'service recovery' });
  client.on('error', () => {});
  await client.connect();
  try {
    const tags = execIds.map(sessionTag);
    // Two statements on purpose: inside one WHERE, PostgreSQL orders the filters by
    // cost and may call pg_terminate_backend on every row of pg_stat_activity
    // before the tag filter — ending sessions of other programs and databases.
    // The pids are selected first (our tags, this database only), then exactly
    // those are terminated.
    const found = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ANY($1::text[]) AND pid <> pg_backend_pid()',
      [tags],
    );
    const pids = found.rows.map((r) => r.pid);
    const killed = pids.length === 0 ? { rows: [] } : await client.query<{ pid: number }>('SELECT pid FROM unnest($1::int[]) AS pid WHERE pg_terminate_backend(pid)', [pids]);
    // A terminated backend lets go of its locks as it exits; wait for that rather than fail.
    await client.query("SET lock_timeout = '10s'");
    const tables = await client.query(
      "SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND c.relname ~ $1",
      [tempTablePattern(execIds)],
    );
    for (const t of tables.rows as { schema: string; name: string }[]) await client.query(`DROP TABLE IF EXISTS ${quoteIdent(t.schema)}.${quoteIdent(t.name)}`);
    return { backends: killed.rows.length, tables: tables.rows.length };
  } finally {
    await client.end().catch(() => {});
  }
}

export async function cleanUpInterrupted(interrupted: readonly Interrupted[], connections: (projectId: string) => ConnectionRegistry, logger: Logger): Promise<CleanupCounts> {
  const byProject = new Map<string, string[]>();
  for (const e of interrupted) byProject.set(e.project_id, [...(byProject.get(e.project_id) ?? []), e.exec_id]);
  // One visit per database: projects often share a warehouse.
  const visits = new Map<string, { conn: PostgresConnection; execIds: string[] }>();
  for (const [projectId, execIds] of byProject) {
    const registry = connections(projectId);
    for (const info of registry.list()) {
      const conn = registry.get(info.name);
      if (conn?.type !== 'postgres') continue;
      const key = JSON.stringify([conn.host, conn.port, conn.database, conn.user]);
      const visit = visits.get(key) ?? { conn, execIds: [] };
      visit.execIds.push(...execIds);
      visits.set(key, visit);
    }
  }
  let backends = 0;
  let tables = 0;
  await Promise.all(
    [...visits.values()].map(async ({ conn, execIds }) => {
      try {
        const r = await cleanOne(conn, execIds);
        backends += r.backends;
        tables += r.tables;
      } catch (err) {
        logger.log('warn', `recovery: could not clean up on connection ${conn.name}: ${errorChain(err)}`);
      }
    }),
  );
  if (backends > 0 || tables > 0) logger.log('warn', `recovery: terminated ${backends} database session(s) and dropped ${tables} temporary table(s) of interrupted executions`);
  return { backends, tables };
}
