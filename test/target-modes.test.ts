/**
 * On real PostgreSQL and DuckDB: every mode twice in a row with
 * exact row counts, view↔table switches, column matching by name, and on
 * PostgreSQL the atomic full-refresh swap and the drop-dependency rules.
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
import type { Relation, TargetSession } from '../engine/targets/target.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

type Probe = (sql: string) => Promise<unknown[][]>;

const ctx = { source: 'env_var' as const, baseDir: '/', cwd: '/' };
const T: Relation = { schema: 'mart', name: 'orders' };
const opts = { modelName: 'orders', runId: 'abcdef', dropCascade: false };
const Q3 = `select * from (values (1, 'a'), (2, 'b'), (3, 'c')) as v(id, label)`;

async function count(probe: Probe, rel = 'mart.orders'): Promise<number> {
  return Number((await probe(`select count(*) from ${rel}`))[0]![0]);
}

async function chainOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return errorChain(err);
  }
  assert.fail('expected a rejection');
}

/** Scenarios whose SQL and results are identical on both targets. */
async function commonModes(t: TestContext, s: TargetSession, probe: Probe): Promise<void> {
  await s.createSchemas([{ schema: 'mart' }, { schema: 'mart' }]);
  await s.createSchemas([{ schema: 'mart' }]);

  await t.test('full-refresh twice writes 3 rows each time', async () => {
    assert.deepEqual(await s.fullRefresh(T, Q3, opts), { rows: 3 });
    assert.deepEqual(await s.fullRefresh(T, Q3, opts), { rows: 3 });
    assert.equal(await count(probe), 3);
    assert.equal(await s.relationKind(T), 'table');
  });

  await t.test('view twice reports 0 rows and replaces the table', async () => {
    assert.deepEqual(await s.view(T, Q3, opts), { rows: 0 });
    assert.deepEqual(await s.view(T, `${Q3}\n-- trailing comment`, opts), { rows: 0 });
    assert.equal(await s.relationKind(T), 'view');
    assert.equal(await count(probe), 3);
  });

  await t.test('full-refresh over a view turns it back into a table', async () => {
    assert.deepEqual(await s.fullRefresh(T, Q3, opts), { rows: 3 });
    assert.equal(await s.relationKind(T), 'table');
  });

  await t.test('truncate twice: created from a view, then truncated and refilled', async () => {
    await s.view(T, Q3, opts);
    assert.deepEqual(await s.truncate(T, Q3, opts), { rows: 3 });
    assert.equal(await s.relationKind(T), 'table');
    assert.deepEqual(await s.truncate(T, `select 7 as id, 'z' as label`, opts), { rows: 1 });
    assert.deepEqual(await probe('select id, label from mart.orders'), [[7, 'z']]);
  });

  await t.test('append twice accumulates, matching columns by name', async () => {
    await s.dropRelation(T, 'table', false);
    assert.equal(await s.relationKind(T), null);
    assert.deepEqual(await s.append(T, Q3, opts), { rows: 3 });
    assert.deepEqual(await s.append(T, `select 'd' as label, 4 as id`, opts), { rows: 1 });
    assert.equal(await count(probe), 4);
    assert.deepEqual(await probe(`select label from mart.orders where id = 4`), [['d']]);
    assert.deepEqual(await s.append(T, `select 5 as id`, opts), { rows: 1 });
    assert.deepEqual(await probe(`select label from mart.orders where id = 5`), [[null]]);
  });

  await t.test('append and truncate reject query columns missing from the table', async () => {
    const q = `select 6 as id, 'x' as extra, 'y' as other`;
    const expected = `model 'orders': column(s) extra, other not found in mart.orders; run with --full-refresh to rebuild`;
    assert.equal(await chainOf(s.append(T, q, opts)), expected);
    assert.equal(await chainOf(s.truncate(T, q, opts)), expected);
    assert.equal(await count(probe), 5);
  });

  await t.test('a failing query is reported with the model and mode', async () => {
    const msg = await chainOf(s.append(T, 'select * from no_such_table', opts));
    assert.match(msg, /^could not materialize model 'orders' \(append\): .*no_such_table/);
    const viaIncremental = await chainOf(s.fullRefresh(T, 'select * from no_such_table', { ...opts, mode: 'incremental' }));
    assert.match(viaIncremental, /^could not materialize model 'orders' \(incremental\): /);
    assert.equal(await count(probe), 5, 'the failed full-refresh left the table as it was');
  });

  await t.test('exec runs statements and reports the last count', async () => {
    await s.exec('create table mart.audit (n integer)');
    assert.deepEqual(await s.exec('insert into mart.audit values (1), (2)'), { rows: 2 });
  });
}

test('postgres materialization modes', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('target_modes');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const probe: Probe = async (sql) => (await client.query({ text: sql, rowMode: 'array' })).rows.map((r: unknown[]) => r.map((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)));
  const target = openTarget(connectionFromUrl('PG', db.url, ctx));
  const s = await target.open();
  t.after(async () => {
    await s.close();
    await target.close();
    await client.end();
    await db.drop();
  });
  const tmpTables = async () => probe(`select table_name from information_schema.tables where table_name like '\\_service\\_tmp\\_%'`);

  await commonModes(t, s, probe);

  await t.test('full-refresh is atomic: a failing CTAS keeps the old table and leaves no temp table', async () => {
    assert.deepEqual(await s.fullRefresh(T, Q3, opts), { rows: 3 });
    assert.deepEqual(await tmpTables(), []);
    const msg = await chainOf(s.fullRefresh(T, 'select 1 / 0 as id', opts));
    assert.equal(msg, `could not materialize model 'orders' (full-refresh): division by zero`);
    assert.equal(await count(probe), 3);
    assert.deepEqual(await tmpTables(), []);
  });

  await t.test('a dependent view blocks the swap without cascade and is dropped with it', async () => {
    await client.query('create view mart.orders_dep as select id from mart.orders');
    // A changed shape cannot be refilled in place: the swap needs the drop.
    const msg = await chainOf(s.fullRefresh(T, `select 9 as id, 'n' as label, 1 as extra`, opts));
    assert.equal(msg, 'could not drop table mart.orders (dependent objects may exist; set drop_cascade: true to force)');
    assert.equal(await count(probe), 3, 'old table unchanged');
    assert.deepEqual(await tmpTables(), []);
    assert.equal(await chainOf(s.dropRelation(T, 'table', false)), msg);
    assert.deepEqual(await s.fullRefresh(T, `select 9 as id, 'n' as label, 1 as extra`, { ...opts, dropCascade: true }), { rows: 1 });
    assert.equal(await s.relationKind({ schema: 'mart', name: 'orders_dep' }), null);
    await client.query('create view mart.orders_dep as select id from mart.orders');
    await s.dropRelation(T, 'table', true);
    assert.equal(await s.relationKind(T), null);
    assert.equal(await s.relationKind({ schema: 'mart', name: 'orders_dep' }), null);
  });

  await t.test('a swap failure other than dependencies keeps the temp table for inspection', async () => {
    // A sequence named like the model makes `DROP TABLE IF EXISTS` fail with "is not a table".
    await client.query('create sequence mart.seqlike');
    const S: Relation = { schema: 'mart', name: 'seqlike' };
    const msg = await chainOf(s.fullRefresh(S, Q3, opts));
    assert.match(msg, /^could not rename temp table to 'mart\.seqlike' \(temp left at mart\._service_tmp_seqlike_abcdef\): "seqlike" is not a table/);
    assert.deepEqual(await tmpTables(), [['_service_tmp_seqlike_abcdef']]);
    assert.equal(await count(probe, 'mart._service_tmp_seqlike_abcdef'), 3);
    await s.dropRelation({ schema: 'mart', name: '_service_tmp_seqlike_abcdef' }, 'table', false);
    await client.query('drop sequence mart.seqlike');
  });

  await t.test('a view is replaced in place, and recreated when its columns change', async () => {
    const V: Relation = { schema: 'mart', name: 'v' };
    await s.view(V, `select 1 as id, 'a' as label`, opts);
    await client.query('create view mart.v_dep as select id from mart.v');
    await s.view(V, `select 2 as id, 'b' as label, true as flag`, opts);
    assert.deepEqual(await probe('select id from mart.v_dep'), [[2]], 'dependent view still valid');
    const msg = await chainOf(s.view(V, `select 'x' as label`, opts));
    assert.equal(msg, 'could not drop view mart.v (dependent objects may exist; set drop_cascade: true to force)');
    assert.deepEqual(await probe('select id, label, flag from mart.v'), [[2, 'b', true]], 'rolled back');
    await client.query('drop view mart.v_dep');
    assert.deepEqual(await s.view(V, `select 'x' as label`, opts), { rows: 0 });
    assert.deepEqual(await probe('select * from mart.v'), [['x']]);
  });

  await t.test('[ext] an unchanged shape with a dependent view is refilled in place, keeping the view', async () => {
    await s.fullRefresh(T, Q3, opts);
    await client.query('create view mart.orders_keep as select id from mart.orders');
    assert.deepEqual(await s.fullRefresh(T, `select 7 as id, 'z' as label`, opts), { rows: 1 });
    assert.deepEqual(await probe('select id from mart.orders_keep'), [[7]]);
    assert.deepEqual(await tmpTables(), []);
    await client.query('drop view mart.orders_keep');
  });

  await t.test('view over a table with a dependent view needs cascade', async () => {
    await s.fullRefresh(T, Q3, opts);
    await client.query('create view mart.orders_dep as select id from mart.orders');
    const msg = await chainOf(s.view(T, Q3, opts));
    assert.equal(msg, 'could not drop table mart.orders (dependent objects may exist; set drop_cascade: true to force)');
    assert.equal(await s.relationKind(T), 'table');
    await s.view(T, Q3, { ...opts, dropCascade: true });
    assert.equal(await s.relationKind(T), 'view');
  });
});

test('duckdb materialization modes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'target-modes-'));
  const file = join(dir, 'wh.duckdb');
  const target = openTarget(connectionFromUrl('DUCK', `duckdb://${file}`, ctx));
  const s = await target.open();
  const raw = await (await duckdbInstance(file)).connect();
  const probe: Probe = async (sql) => (await raw.runAndReadAll(sql)).getRowsJS().map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  t.after(async () => {
    raw.closeSync();
    await s.close();
    await target.close();
    await closeDuckdbInstance(file);
    await rm(dir, { recursive: true, force: true });
  });
  assert.equal(target.singleWriter, true);

  await commonModes(t, s, probe);

  await t.test('a failing full-refresh rolls back and keeps the old table', async () => {
    assert.deepEqual(await s.fullRefresh(T, Q3, opts), { rows: 3 });
    const msg = await chainOf(s.fullRefresh(T, `select cast('x' as integer) as id`, opts));
    assert.match(msg, /^could not materialize model 'orders' \(full-refresh\): Conversion Error/);
    assert.equal(await count(probe), 3);
  });

  await t.test('relations in an attached database are addressed with their catalog', async () => {
    await s.exec(`attach '${join(dir, 'lake.duckdb')}' as lake`);
    const L: Relation = { database: 'lake', schema: 'raw', name: 'orders' };
    await s.createSchemas([{ database: 'lake', schema: 'raw' }]);
    assert.equal(await s.relationKind(L), null);
    assert.deepEqual(await s.fullRefresh(L, `select 1 as id`, opts), { rows: 1 });
    assert.equal(await s.relationKind(L), 'table');
    assert.equal(await s.relationKind({ schema: 'raw', name: 'orders' }), null, 'main catalog is separate');
    await s.exec('detach lake');
  });
});
