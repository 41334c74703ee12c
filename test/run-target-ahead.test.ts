/**
 * The PostgreSQL runner with a build pool the CLI started (and connected)
 * ahead of the run (actors/build-run/target-ahead.ts, actors/build-run/open-pool-runner.ts): borrowed
 * when its connection is the run's, ignored (and left to its opener) when
 * not, and a connect failure of the ahead pool is the run's spec error. Real
 * PostgreSQL; backends are counted in pg_stat_activity, which drops a closed
 * connection's backend a moment after the close, hence `settles`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPoolRunner } from '../actors/build-run/open-pool-runner.js';
import { openTargetAhead } from '../actors/build-run/target-ahead.js';
import type { PostgresConnection } from '../engine/connections/connection.js';
import { memoryLogger } from '../engine/log.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';

let db: TempDatabase | undefined;
before(async () => {
  if (await pgAvailable()) db = await createTempDatabase('ahead');
});
after(async () => {
  await db?.drop();
});

function connection(url: string, schema = 'public'): PostgresConnection {
  const u = new URL(url);
  return { name: 'WH', source: 'project', type: 'postgres', host: u.hostname, port: Number(u.port || 5432), user: decodeURIComponent(u.username), database: u.pathname.slice(1), sslmode: 'disable', schema };
}

const settings = { runId: 'ahead', targetName: 'WH', fullRefresh: false };

async function backends(): Promise<number> {
  const c = new pg.Client({ connectionString: db!.url });
  await c.connect();
  try {
    const r = await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'service'", [db!.name]);
    return r.rows[0].n as number;
  } finally {
    await c.end();
  }
}

/** The count of our backends once it reaches `expected` (polled up to 5 s); the last count seen otherwise. */
async function settles(expected: number): Promise<number> {
  let n = await backends();
  for (let i = 0; i < 100 && n !== expected; i++) {
    await new Promise((r) => setTimeout(r, 50));
    n = await backends();
  }
  return n;
}

describe('PostgreSQL runner and the target opened ahead', () => {
  it('borrows a matching target: its connections serve the run, and the run leaves it open', async (t) => {
    if (!(await requirePg(t))) return;
    const conn = connection(db!.url);
    const ahead = openTargetAhead(conn, 2);
    try {
      await ahead.ready;
      assert.equal(await settles(2), 2, 'two connections opened ahead');
      const runner = await openPoolRunner({ connection: conn, settings, threads: 2, schemas: [{ schema: 'ahead_a' }], logger: memoryLogger(), logLevel: 'info', ahead });
      await runner.close();
      assert.equal(await settles(2), 2, 'no connection of its own; the borrowed ones stay open');
      const c = new pg.Client({ connectionString: db!.url });
      await c.connect();
      try {
        const r = await c.query("select count(*)::int as n from information_schema.schemata where schema_name = 'ahead_a'");
        assert.equal(r.rows[0].n, 1, 'the schema was created through the borrowed pool');
      } finally {
        await c.end();
      }
    } finally {
      await ahead.close();
    }
  });

  it('opens its own target when the connection differs, and closes it', async (t) => {
    if (!(await requirePg(t))) return;
    const ahead = openTargetAhead(connection(db!.url, 'other'), 1);
    try {
      await ahead.ready;
      assert.equal(await settles(1), 1);
      const conn = connection(db!.url);
      const runner = await openPoolRunner({ connection: conn, settings, threads: 1, schemas: [{ schema: 'ahead_b' }], logger: memoryLogger(), logLevel: 'info', ahead });
      assert.equal(await settles(2), 2, "the ahead target's connection and the run's own");
      await runner.close();
      assert.equal(await settles(1), 1, "the run closed its own; the ahead pool's is its opener's");
    } finally {
      await ahead.close();
    }
  });

  it("reports the ahead target's connect failure as the documented message", async (t) => {
    if (!(await requirePg(t))) return;
    const dead = { ...connection(db!.url), port: 1 };
    const ahead = openTargetAhead(dead, 2);
    try {
      await assert.rejects(
        openPoolRunner({ connection: dead, settings, threads: 2, schemas: [{ schema: 'x' }], logger: memoryLogger(), logLevel: 'info', ahead }),
        (err: Error) => /^could not connect to 'WH'/.test(err.message),
      );
    } finally {
      await ahead.close();
    }
  });
});
