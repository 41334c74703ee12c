/**
 * Real PostgreSQL for tests: each caller gets a fresh database and drops it
 * afterwards. When the server is unreachable, tests fail under CI=true
 * (a skip in CI would hide untested code; README.md, quick start) and skip locally with a reason.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';

export const PG_ADMIN_URL = process.env.SERVICE_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * The server is shared with other programs (and other tests that terminate
 * sessions): every client here has an 'error' listener, and a session
 * terminated under us (57P01 admin_shutdown, or the connection gone) while
 * tearing down is not a failure. Use as `.catch(tolerateTermination)`.
 */
export function tolerateTermination(err: unknown): void {
  const e = err as { code?: string; message?: string } | null;
  if (e?.code === '57P01' || /Connection terminated|not queryable|ECONNRESET/.test(e?.message ?? '')) return;
  throw err;
}

/** A connected admin client with an 'error' listener (a terminated idle session must not crash the test run). */
async function adminClient(url = PG_ADMIN_URL): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

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
  const admin = await adminClient();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end().catch(tolerateTermination);
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = await adminClient();
      try {
        // The pids first, then exactly those: a terminate call inside a WHERE may be run on every row.
        const pids = (await c.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name])).rows.map((r) => r.pid as number);
        if (pids.length > 0) await c.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end().catch(tolerateTermination);
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
