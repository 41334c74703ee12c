/**
 * The PostgreSQL side of a bench run: one fresh database `bench_<random>`
 * created at the start and dropped at the end (also on Ctrl-C), on the server
 * named by SERVICE_BENCH_PG_URL (default: local trust auth, as in the tests).
 * Loopback only: the benchmarks generate their own load and must not send it
 * to another machine. The database runs with `synchronous_commit = off`
 * (see createBenchDatabase).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.SERVICE_BENCH_PG_URL ?? process.env.SERVICE_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export interface BenchDatabase {
  readonly name: string;
  /** URL of the bench database (for connections and direct clients). */
  readonly url: string;
  /** PostgreSQL server_version. */
  readonly serverVersion: string;
  /** Drops the given schemas (CASCADE), one statement each: a fresh slate between passes. */
  resetSchemas(schemas: readonly string[]): Promise<void>;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

async function adminClient(): Promise<pg.Client> {
  const host = new URL(ADMIN_URL).hostname;
  if (!LOOPBACK.has(host)) throw new Error(`SERVICE_BENCH_PG_URL must point at this machine (loopback), got host '${host}'`);
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${ADMIN_URL} (${(err as Error).message}); start it or set SERVICE_BENCH_PG_URL`);
  }
  return client;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = await adminClient();
  let serverVersion: string;
  try {
    serverVersion = String((await admin.query('SHOW server_version')).rows[0]?.server_version ?? '?');
    await admin.query(`CREATE DATABASE ${name}`);
    // Commit durability off for this database only (both our runs and the baselines connect to it):
    // the WAL flush per commit is identical on both sides but noisy on a shared VM disk, and
    // removing it makes the baseline faster, so every ratio is stricter, not kinder.
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(ADMIN_URL, name);
  let dropped = false;
  return {
    name,
    url,
    serverVersion,
    async resetSchemas(schemas) {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => {});
      await c.connect();
      try {
        for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS "${s.replace(/"/g, '""')}" CASCADE`);
      } finally {
        await c.end();
      }
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      const c = await adminClient();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
