/**
 * Cancellation on real databases: the in-flight statement is stopped
 * by the database (PostgreSQL `pg_cancel_backend` from the control
 * connection, DuckDB `interrupt()`), the call rejects with the `cancelled`
 * error within seconds, nothing is left running, and no temp table remains.
 * A cancel request is consumed by that one failure: the session stays usable.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import pg from 'pg';
import { waitFor, within } from './helpers/within.js';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { EngineError } from '../engine/errors.js';
import { closeDuckdbInstance } from '../engine/targets/duckdb/instance-cache.js';
import { openTarget } from '../engine/targets/index.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const ctx = { source: 'env_var' as const, baseDir: '/', cwd: '/' };

/** The statement's rejection reason (or a marker when it resolved), observed from the start. */
function settle(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => 'resolved',
    (err: unknown) => err,
  );
}

function isCancelledError(err: unknown): boolean {
  return err instanceof EngineError && err.code === 'cancelled' && err.message === 'cancelled' && err.cause === undefined;
}

test('postgres: cancel stops the running statement', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('target_cancel');
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const target = openTarget(connectionFromUrl('PG', db.url, ctx));
  t.after(async () => {
    await target.close();
    await admin.end();
    await db.drop();
  });
  const activeSleeps = async () =>
    Number((await admin.query(`select count(*) from pg_stat_activity where datname = $1 and state = 'active' and query like '%pg_sleep(30)%' and pid <> pg_backend_pid()`, [db.name])).rows[0].count);

  await t.test('session.cancel() rejects the statement with cancelled within seconds', async () => {
    const s = await target.open();
    const running = settle(s.exec('select pg_sleep(30)'));
    await waitFor(async () => (await activeSleeps()) === 1, 10_000, 'the statement to run');
    await s.cancel();
    assert.ok(isCancelledError(await within(running, 5000, 'the cancelled statement to fail')), 'rejected with the cancelled error');
    await waitFor(async () => (await activeSleeps()) === 0, 5000, 'the cancelled backend to go idle');
    assert.deepEqual(await s.exec('select 1'), { rows: 1 }, 'the session stays usable for the next operation');
    await s.close();
  });

  await t.test('a cancelled full-refresh reports cancelled, keeps the old table and leaves no temp table', async () => {
    const s = await target.open();
    const T = { schema: 'public', name: 's' };
    const opts = { modelName: 's', runId: 'cancel', dropCascade: false };
    await s.fullRefresh(T, 'select 1 as id', opts);
    const running = settle(s.fullRefresh(T, 'select 2 as id from (select pg_sleep(30)) x', opts));
    await waitFor(async () => (await activeSleeps()) === 1, 10_000, 'the statement to run');
    await s.cancel();
    assert.ok(isCancelledError(await within(running, 5000, 'the cancelled full-refresh to fail')), 'rejected with the cancelled error');
    await waitFor(async () => (await activeSleeps()) === 0, 5000, 'the cancelled backend to go idle');
    const tmp = await admin.query(`select table_name from information_schema.tables where table_name like '\\_service\\_tmp\\_%'`);
    assert.deepEqual(tmp.rows, []);
    assert.deepEqual((await admin.query('select id from public.s')).rows, [{ id: 1 }]);
    await s.close();
  });

  await t.test('Target.cancel(cancelKey) stops a session by its key, also from another Target (another thread)', async () => {
    const s = await target.open();
    assert.match(s.cancelKey, /^\d+$/);
    const first = settle(s.exec('select pg_sleep(30)'));
    await waitFor(async () => (await activeSleeps()) === 1, 10_000, 'the statement to run');
    await target.cancel(s.cancelKey);
    assert.ok(isCancelledError(await within(first, 5000, 'the cancelled statement to fail')), 'rejected with the cancelled error');
    await waitFor(async () => (await activeSleeps()) === 0, 5000, 'the cancelled backend to go idle');

    const elsewhere = openTarget(connectionFromUrl('PG', db.url, ctx));
    const second = settle(s.exec('select pg_sleep(30)'));
    await waitFor(async () => (await activeSleeps()) === 1, 10_000, 'the statement to run');
    await elsewhere.cancel(s.cancelKey);
    assert.ok(isCancelledError(await within(second, 5000, 'the cancelled statement to fail')), 'a bare pg_cancel_backend is recognised as a cancel');
    await waitFor(async () => (await activeSleeps()) === 0, 5000, 'the cancelled backend to go idle');
    await elsewhere.close();
    assert.deepEqual(await s.exec('select 1'), { rows: 1 });
    await s.close();
  });

  await t.test('a cancel that lands between statements fails the next one, once', async () => {
    const s = await target.open();
    await s.cancel();
    await assert.rejects(within(s.exec('select pg_sleep(30)'), 5000, 'the pre-cancelled statement to fail'), isCancelledError);
    assert.deepEqual(await s.exec('select 1'), { rows: 1 });
    await s.close();
  });
});

test('duckdb: cancel interrupts a long query', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'target-cancel-'));
  const file = join(dir, 'wh.duckdb');
  const target = openTarget(connectionFromUrl('DUCK', `duckdb://${file}`, ctx));
  t.after(async () => {
    await closeDuckdbInstance(file);
    await rm(dir, { recursive: true, force: true });
  });
  const LONG = 'select count(*) from range(1000000000) a, range(1000000) b';

  await t.test('session.cancel() rejects with cancelled', async () => {
    const s = await target.open();
    const running = settle(s.countQuery(LONG));
    await sleep(500); // DuckDB has no activity view to poll; a cancel before the query starts fails it too
    await s.cancel();
    assert.ok(isCancelledError(await within(running, 5000, 'the interrupted query to fail')), 'rejected with the cancelled error');
    assert.equal(await s.countQuery('select 42'), 42, 'the session stays usable');
    await s.close();
  });

  await t.test('a cancelled full-refresh rolls back and reports cancelled', async () => {
    const s = await target.open();
    const T = { schema: 'main', name: 'big' };
    const opts = { modelName: 'big', runId: 'cancel', dropCascade: false };
    await s.fullRefresh(T, 'select 1 as n', opts);
    const running = settle(s.fullRefresh(T, LONG, opts));
    await sleep(500);
    await target.cancel(s.cancelKey);
    assert.ok(isCancelledError(await within(running, 5000, 'the interrupted full-refresh to fail')), 'rejected with the cancelled error');
    await s.close();
    const check = await target.open();
    assert.equal(await check.countQuery('select n from main.big'), 1, 'old table intact');
    await check.close();
  });
});
