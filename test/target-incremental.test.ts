/**
 * On real PostgreSQL and DuckDB: stage into the temp relation,
 * merge with each strategy (exact resulting rows, including an updated row),
 * temp tables gone afterwards on success and failure, and the tier-B
 * watermark probe with its literal per column type.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import { connectionFromUrl } from '../engine/connections/parse-entry.js';
import { errorChain } from '../engine/errors.js';
import { closeDuckdbInstance, duckdbInstance } from '../engine/targets/duckdb/instance-cache.js';
import { openTarget } from '../engine/targets/index.js';
import type { MergeStrategy, Relation, TargetSession } from '../engine/targets/target.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

type Probe = (sql: string) => Promise<unknown[][]>;

const ctx = { source: 'env_var' as const, baseDir: '/', cwd: '/' };
const T: Relation = { schema: 'public', name: 'orders' };
const opts = { modelName: 'orders', runId: 'qwerty', dropCascade: false };
const BASE = `select * from (values (1, 'placed', 10), (2, 'placed', 20), (3, 'placed', 30)) as v(id, status, amount)`;
const DELTA = `select * from (values (3, 'shipped', 31), (4, 'placed', 40)) as v(id, status, amount)`;

async function chainOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return errorChain(err);
  }
  assert.fail('expected a rejection');
}

const EXPECTED: Record<MergeStrategy, unknown[][]> = {
  'delete+insert': [[1, 'placed', 10], [2, 'placed', 20], [3, 'shipped', 31], [4, 'placed', 40]],
  'update+insert': [[1, 'placed', 10], [2, 'placed', 20], [3, 'shipped', 31], [4, 'placed', 40]],
  insert: [[1, 'placed', 10], [2, 'placed', 20], [3, 'placed', 30], [4, 'placed', 40]],
};

async function scenarios(t: TestContext, s: TargetSession, probe: Probe, tmpLeft: () => Promise<unknown[][]>): Promise<void> {
  const rows = () => probe('select id, status, amount from public.orders order by id');
  await s.createSchemas([{ schema: 'public' }]);

  for (const strategy of ['delete+insert', 'update+insert', 'insert'] as const) {
    await t.test(`stage + merge (${strategy})`, async () => {
      await s.fullRefresh(T, BASE, opts);
      const staged = await s.stage(T, DELTA, opts);
      assert.deepEqual(staged, { tmp: { schema: 'public', name: '_service_tmp_orders_qwerty' }, rows: 2 });
      await s.merge(T, staged.tmp, ['id'], strategy, { modelName: 'orders' });
      assert.deepEqual(await rows(), EXPECTED[strategy]);
      assert.equal(await s.relationKind(staged.tmp), null, 'temp dropped after merge');
    });
  }

  await t.test('merge inserts staged columns by name into a wider table', async () => {
    await s.fullRefresh(T, BASE, opts);
    const staged = await s.stage(T, `select 'cancelled' as status, 2 as id`, opts);
    await s.merge(T, staged.tmp, ['id'], 'delete+insert', { modelName: 'orders' });
    assert.deepEqual(await rows(), [[1, 'placed', 10], [2, 'cancelled', null], [3, 'placed', 30]]);
  });

  await t.test('update+insert with only key columns inserts new keys and leaves others', async () => {
    await s.fullRefresh(T, BASE, opts);
    const staged = await s.stage(T, `select * from (values (2), (5)) as v(id)`, opts);
    await s.merge(T, staged.tmp, ['id'], 'update+insert', { modelName: 'orders' });
    assert.deepEqual(await rows(), [[1, 'placed', 10], [2, 'placed', 20], [3, 'placed', 30], [5, null, null]]);
  });

  await t.test('composite keys match on every key column; NULL keys never match', async () => {
    await s.fullRefresh(T, `select * from (values (1, 'a', 1), (1, 'b', 2), (null, 'c', 3)) as v(id, status, amount)`, opts);
    const staged = await s.stage(T, `select * from (values (1, 'b', 20), (null, 'c', 30)) as v(id, status, amount)`, opts);
    await s.merge(T, staged.tmp, ['id', 'status'], 'update+insert', { modelName: 'orders' });
    assert.deepEqual(await probe('select id, status, amount from public.orders order by amount'), [[1, 'a', 1], [null, 'c', 3], [1, 'b', 20], [null, 'c', 30]]);
  });

  await t.test('a staged column missing from the target fails the merge and drops the temp', async () => {
    await s.fullRefresh(T, BASE, opts);
    const staged = await s.stage(T, `select 9 as id, 'x' as note`, opts);
    const msg = await chainOf(s.merge(T, staged.tmp, ['id'], 'insert', { modelName: 'orders' }));
    assert.equal(msg, `model 'orders': column(s) note not found in public.orders; run with --full-refresh to rebuild`);
    assert.deepEqual(await tmpLeft(), []);
  });

  await t.test('a key the query does not produce cannot generate merge SQL', async () => {
    const staged = await s.stage(T, `select 9 as id`, opts);
    const msg = await chainOf(s.merge(T, staged.tmp, ['order_id'], 'insert', { modelName: 'orders' }));
    assert.equal(msg, `could not generate merge SQL for 'orders': unique_key column(s) order_id not in the query's output`);
    assert.deepEqual(await tmpLeft(), []);
  });

  await t.test('stage and merge failures carry their stage prefixes and leave no temp', async () => {
    await s.fullRefresh(T, BASE, opts);
    assert.match(await chainOf(s.stage(T, 'select * from missing_source', opts)), /^could not create temp table for incremental merge on 'orders': .*missing_source/);
    const staged = await s.stage(T, `select 'not a number' as id`, opts);
    assert.match(await chainOf(s.merge(T, staged.tmp, ['id'], 'delete+insert', { modelName: 'orders' })), /^could not execute incremental merge for 'orders': /);
    assert.deepEqual(await tmpLeft(), []);
    assert.deepEqual(await rows(), EXPECTED.insert.slice(0, 3), 'target unchanged by the failed merge');
  });

  await t.test('maxValue formats literals per type', async () => {
    const W: Relation = { schema: 'public', name: 'wm' };
    await s.exec(`create table public.wm (i integer, n numeric(10,2), d date, ts timestamp, tz timestamptz, whole timestamp, s text, b boolean)`);
    assert.deepEqual(await s.maxValue(W, 'i'), { literal: null, dataType: (await s.columnType(W, 'i'))!, category: 'number' });
    await s.exec(`insert into public.wm values
      (42, 12.50, date '2024-02-03', timestamp '2024-02-03 04:05:06.123456', timestamptz '2024-02-03 04:05:06.5+02:00', timestamp '2024-02-03 04:05:06', 'o''brien', true),
      (7, 1.25, date '2023-12-31', timestamp '2023-01-01 00:00:00', timestamptz '2023-01-01 00:00:00+00:00', timestamp '2023-01-01 00:00:00', 'a', false)`);
    const lit = async (c: string) => (await s.maxValue(W, c)).literal;
    assert.equal(await lit('i'), '42');
    assert.equal(await lit('n'), '12.50');
    assert.equal(await lit('d'), `'2024-02-03'`);
    assert.equal(await lit('ts'), `'2024-02-03 04:05:06.123456'`);
    assert.equal(await lit('tz'), `'2024-02-03T02:05:06.500000Z'`);
    assert.equal(await lit('whole'), `'2024-02-03 04:05:06'`);
    assert.equal(await lit('s'), `'o''brien'`);
    assert.equal(await lit('b'), 'true');
    assert.equal((await s.maxValue(W, 'tz')).category, 'timestamptz');
    await assert.rejects(s.maxValue(W, 'nope'), /column "nope" does not exist in public\.wm/);
    await assert.rejects(s.maxValue({ schema: 'public', name: 'missing' }, 'i'), /relation public\.missing does not exist/);
    assert.equal(await s.columnType(W, 'nope'), null);
  });
}

test('postgres incremental staging, merge and watermark probe', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('target_incr');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const probe: Probe = async (sql) => (await client.query({ text: sql, rowMode: 'array' })).rows;
  const target = openTarget(connectionFromUrl('PG', db.url, ctx));
  const s = await target.open();
  t.after(async () => {
    await s.close();
    await target.close();
    await client.end();
    await db.drop();
  });
  await scenarios(t, s, probe, () => probe(`select table_name from information_schema.tables where table_name like '\\_service\\_tmp\\_%'`));
  await t.test('postgres names the column types as information_schema does', async () => {
    assert.equal(await s.columnType({ schema: 'public', name: 'wm' }, 'tz'), 'timestamp with time zone');
    assert.equal((await s.maxValue({ schema: 'public', name: 'wm' }, 'd')).dataType, 'date');
  });
});

test('duckdb incremental staging, merge and watermark probe', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'target-incr-'));
  const file = join(dir, 'wh.duckdb');
  const target = openTarget(connectionFromUrl('DUCK', `duckdb://${file}`, ctx));
  const s = await target.open();
  const raw = await (await duckdbInstance(file)).connect();
  const probe: Probe = async (sql) => (await raw.runAndReadAll(sql)).getRowsJS().map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  t.after(async () => {
    raw.closeSync();
    await s.close();
    await closeDuckdbInstance(file);
    await rm(dir, { recursive: true, force: true });
  });
  await scenarios(t, s, probe, () => probe(`select table_name from information_schema.tables where table_name like '\\_service\\_tmp\\_%' escape '\\'`));
  await t.test('duckdb names the column types as information_schema does', async () => {
    assert.equal(await s.columnType({ schema: 'public', name: 'wm' }, 'tz'), 'TIMESTAMP WITH TIME ZONE');
  });
});
