/**
 * Compile-time queries (SyncQuery): one session for the whole compile, the
 * database's message in a failure, and after close() nothing left open — no
 * backend on PostgreSQL, no lock on a DuckDB file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { duckdbActor } from '../actors/duckdb-actor.js';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { EngineError } from '../engine/errors.js';
import { SyncQuery } from '../engine/project/dbt/compile-time-query/sync-query.js';
import { duckSql } from './helpers/duck-file.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';
import { waitFor } from './helpers/within.js';

const ctx = { source: 'project' as const, baseDir: tmpdir(), cwd: tmpdir() };

test('PostgreSQL: every query of a compile on one session; a failing one names the database error; close ends the session', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('sync_query');
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const q = new SyncQuery(connectionFromUrl('PG', db.url, ctx));
  try {
    const first = q.query('select pg_backend_pid() as pid, 1::int as one');
    assert.deepEqual(first.columns, ['pid', 'one']);
    const pid = first.rows[0]![0];
    assert.equal(typeof pid, 'number');
    for (let i = 0; i < 20; i++) assert.equal(q.query('select pg_backend_pid()').rows[0]![0], pid);
    assert.throws(
      () => q.query('select 1/0'),
      (err: unknown) => err instanceof EngineError && err.code === 'compile' && /^query failed: .*division by zero/.test(err.message),
    );
    // The session survives a failed statement.
    assert.equal(q.query('select pg_backend_pid()').rows[0]![0], pid);
    q.close();
    q.close(); // idempotent
    await waitFor(async () => (await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount === 0, 5000, 'the compile-time session to end');
  } finally {
    q.close();
    await admin.end();
    await db.drop();
  }
});

test('DuckDB: queries share one process holding the file; after close the file is free and keeps what they wrote', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-query-'));
  const file = join(dir, 'wh.duckdb');
  const q = new SyncQuery(connectionFromUrl('DUCK', `duckdb://${file}`, ctx));
  try {
    q.query('create table t as select 42 as v');
    // A temporary table lives as long as its connection: seen by the next query, it is one session.
    q.query('create temp table tt as select 7 as x');
    assert.deepEqual(q.query('select x from tt').rows, [[7]]);
    assert.deepEqual(q.query('select v, current_setting(\'threads\') is not null as s from t').rows, [[42, true]]);
    assert.throws(
      () => q.query('select * from missing_table'),
      (err: unknown) => err instanceof EngineError && err.code === 'compile' && /^query failed: .*missing_table/.test(err.message),
    );
    q.close();
    // Opened in this process by the file's actor: a lock still held by the query process would fail it.
    assert.deepEqual(await duckSql(file, 'select v from t'), [[42]]);
  } finally {
    q.close();
    await duckdbActor(file).close();
    rmSync(dir, { recursive: true, force: true });
  }
});
