/**
 * Real PostgreSQL for tests: each caller gets a fresh database and drops it
 * afterwards. When the server is unreachable, tests fail under CI=true
 * (a skip in CI would hide untested code; README.md, quick start) and skip locally with a reason.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';

export const PG_ADMIN_URL = process.env.SERVICE_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export async function pgAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TempDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** Creates `<prefix>_<random>`; the returned drop() terminates leftover sessions first. */
export async function createTempDatabase(prefix: string): Promise<TempDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
        await c.query(`drop database if exists "${name}"`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Call at the top of a PostgreSQL test: returns false (and marks the test
 * skipped) when the server is down locally; throws under CI=true.
 */
export async function requirePg(t: TestContext): Promise<boolean> {
  if (await pgAvailable()) return true;
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is unreachable at ${PG_ADMIN_URL} and CI=true: PostgreSQL tests must not be skipped in CI`);
  t.skip(`PostgreSQL unreachable at ${PG_ADMIN_URL}; start it with pg_ctlcluster (README.md, quick start)`);
  return false;
}
