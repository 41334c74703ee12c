/**
 * The StateStore contract on the PostgreSQL backend: one fresh database for
 * this file (dropped afterwards), one schema per case via the connection's
 * search_path; and a database with a case-insensitive default collation. Unreachable PostgreSQL skips locally and fails under CI=true.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { openStateStore } from '../engine/state/open-state-store.js';
import { EngineError } from '../engine/errors.js';
import { PG_ADMIN_URL, createTempDatabase, requirePg, tolerateTermination } from './helpers/pg.js';
import { runStoreContract } from './store-contract.js';

test('PostgreSQL state store contract', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('store_pg');
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  let n = 0;
  const schemaUrl = (schema: string) => {
    const url = new URL(db.url);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  };
  try {
    await runStoreContract(t, {
      location: async () => {
        const schema = `case_${++n}`;
        await admin.query(`CREATE SCHEMA ${schema}`);
        return schemaUrl(schema);
      },
      schemaVersions: async (location) => {
        const schema = new URL(location).searchParams.get('options')!.split('=')[1]!;
        const r = await admin.query(`SELECT version FROM ${schema}.schema_version ORDER BY version`);
        return r.rows.map((row) => Number(row.version));
      },
    });

  } finally {
    await admin.end();
    await db.drop();
  }
});

test('exec ids sort in byte order (COLLATE "C") on a database whose default collation is ICU en-US', async (t) => {
  if (!(await requirePg(t))) return;
  const name = `store_icu_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
    const store = await openStateStore(url.toString());
    try {
      const direct = new pg.Client({ connectionString: url.toString() });
      await direct.connect();
      const plain = (await direct.query("SELECT 'B' < 'a' AS lt")).rows[0].lt;
      await direct.end();
      assert.equal(plain, false, 'the database collation itself sorts case-insensitively');
      const p = await store.createProject({ name: 'c' });
      for (const id of ['b', 'B', 'a', 'Z', '9'].map((c) => c.padEnd(27, '0'))) {
        await store.createExecution({ exec_id: id, project_id: p.id, job_id: 'job_aaaaaaaaaaaaaaaa', job_name: 'j', job_type: 'query', file_name: 'q.sql', trigger: 'api', start_time: '2025-03-01T00:00:00.000Z' });
      }
      const list = await store.listExecutions({ projectId: p.id, order: 'asc', limit: 10 });
      assert.deepEqual(list.map((e) => e.exec_id[0]), ['9', 'B', 'Z', 'a', 'b']);
      assert.equal((await store.claimNextQueued())?.exec_id[0], '9');
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

test('an unreachable PostgreSQL state store is a connection error', async () => {
  await assert.rejects(openStateStore('postgresql://nobody@127.0.0.1:1/none'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'connection');
    assert.match(err.message, /^cannot open the PostgreSQL state store: /);
    return true;
  });
});

test('ping fails within its bound while another session locks the executions table, and recovers after', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('store_pg_ping');
  const store = await openStateStore(db.url);
  const locker = new pg.Client({ connectionString: db.url });
  locker.on('error', () => {});
  await locker.connect();
  try {
    assert.ok((await store.ping(5000)) >= 0);
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE executions IN ACCESS EXCLUSIVE MODE');
    // (On a shared server another program may end our session meanwhile: any connection error counts.)
    const started = performance.now();
    await assert.rejects(store.ping(300), (err: unknown) => err instanceof EngineError && err.code === 'connection');
    assert.ok(performance.now() - started < 3000, 'the check gives up at its bound, not when the lock is released');
    // A second check while the table stays locked fails the same way (checks do not pile up).
    await assert.rejects(store.ping(300), (err: unknown) => err instanceof EngineError && err.code === 'connection');
    await locker.query('ROLLBACK');
    assert.ok((await store.ping(5000)) >= 0);
    // Its connection terminated from outside: the next check reconnects.
    const admin = new pg.Client({ connectionString: db.url });
    admin.on('error', () => {});
    await admin.connect();
    const pids = (await admin.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'service health'")).rows.map((r) => r.pid);
    assert.equal(pids.length, 1);
    await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    await admin.end();
    await store.ping(2000).catch(() => {}); // the check that finds the connection gone may fail…
    assert.ok((await store.ping(5000)) >= 0); // …the next one reconnects
  } finally {
    await locker.end().catch(tolerateTermination);
    await store.close();
    await db.drop();
  }
});
