/**
 * The fixture the daemon execution tests share: a fresh PostgreSQL database
 * seeded with the file's SQL, an in-process daemon (startApiServer) whose
 * project env file points WAREHOUSE at it, both torn down after the file.
 * `ready(t)` skips locally (fails under CI=true) when PostgreSQL is down.
 */
import { after, before, type TestContext } from 'node:test';
import pg from 'pg';
import { fixtureEnv, startApiServer, type ApiServer } from './api-server.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './pg.js';

export interface PgDaemon {
  ready(t: TestContext): Promise<ApiServer | undefined>;
  readonly db: TempDatabase | undefined;
  readonly api: ApiServer | undefined;
  /** `pg_sleep(60)` statements of the fixture database still running (cancel checks). */
  sleepers(): Promise<number>;
}

export function usePgDaemon(prefix: string, seedSql: string, hooks: { afterStart?: (api: ApiServer) => Promise<void>; beforeClose?: () => Promise<void> } = {}): PgDaemon {
  const f: { db?: TempDatabase; api?: ApiServer } = {};
  before(async () => {
    if (!(await pgAvailable())) return;
    f.db = await createTempDatabase(prefix);
    const c = new pg.Client({ connectionString: f.db.url });
    c.on('error', () => {}); // a session terminated by another test fails its query, not the run
    await c.connect();
    try {
      await c.query(seedSql);
    } finally {
      await c.end();
    }
    f.api = await startApiServer({ acmeEnv: fixtureEnv(f.db.url) });
    await hooks.afterStart?.(f.api);
  });
  after(async () => {
    await f.api?.close();
    await hooks.beforeClose?.();
    await f.db?.drop();
  });
  return {
    async ready(t) {
      if (!(await requirePg(t))) return undefined;
      return f.api!;
    },
    get db() {
      return f.db;
    },
    async sleepers() {
      const c = new pg.Client({ connectionString: f.db!.url });
      c.on('error', () => {}); // a session terminated by another test fails its query, not the run
      await c.connect();
      try {
        const r = await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and query like '%pg_sleep(60)%' and pid <> pg_backend_pid()", [f.db!.name]);
        return r.rows[0].n as number;
      } finally {
        await c.end();
      }
    },
    get api() {
      return f.api;
    },
  };
}
