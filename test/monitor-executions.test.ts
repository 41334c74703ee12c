// Monitor jobs end to end through the HTTP API: on real
// PostgreSQL, a breached freshness threshold makes the execution `warning`
// with a data_stale event naming the object and the metric (the issue's
// acceptance check); row_count, null_count, unique_count and min_max values;
// wildcards with schemata.exclude; change events against the baseline (the
// last success/warning execution); missing objects and columns fail their
// tasks; and a DuckDB monitor measured through the file's actor.
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pg from 'pg';
import { duckdbActor } from '../actors/duckdb-actor.js';
import { duckExec } from './helpers/duck-file.js';
import { eventually, fixtureEnv, startApiServer, type ApiServer } from './helpers/api-server.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';

let api: ApiServer | undefined;
let db: TempDatabase | undefined;
let lakeFile = '';
const jobs: Record<string, string> = {};

async function sql(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: db!.url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

before(async () => {
  if (!(await pgAvailable())) return;
  db = await createTempDatabase('monitor_exec');
  await sql(`create schema shop;
    create table shop.orders (id int, customer_id int, amount numeric(10,2), status text, updated_at timestamptz);
    insert into shop.orders values (1, 10, 5.50, 'paid', now() - interval '7 hours'), (2, null, 7.25, 'void', now() - interval '8 hours'), (3, 10, 1, 'paid', now() - interval '9 hours');
    create table shop.customers (id int, name text);
    insert into shop.customers values (10, 'ada'), (11, 'bob');
    create table shop.legacy (id int);
    create table shop.load_tmp (id int);
    create schema slow;
    create view slow.v as select 1 as x from pg_sleep(60);`);
  api = await startApiServer({ acmeEnv: fixtureEnv(db.url) });
  lakeFile = path.join(path.dirname(api.acme.envFile), 'lake.duckdb');
});

after(async () => {
  await api?.close();
  if (lakeFile) await duckdbActor(lakeFile).close();
  await db?.drop();
});

async function ready(t: TestContext): Promise<ApiServer | undefined> {
  if (!(await requirePg(t))) return undefined;
  return api!;
}

/** Saves the monitor file (once) and runs its default job; the finished execution and its tasks. */
async function run(a: ApiServer, name: string, body?: string): Promise<{ exec: any; tasks: any[] }> {
  if (body !== undefined) {
    const saved = await a.request('POST', '/project/file/save', { body: { file: { name, body } } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.job_file_kind, 'monitor');
    jobs[name] ??= saved.body.default_job_id;
  }
  const started = await a.request('POST', '/project/job/run', { body: { job_id: jobs[name] } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const filters = encodeURIComponent(JSON.stringify({ exec_id: started.body.exec_id }));
  const exec = await eventually(async () => {
    const e = (await a.request('GET', `/execution/list?filters=${filters}`)).body.executions[0];
    return e.status === 'queued' || e.status === 'running' ? undefined : e;
  }, 20_000, `monitor execution of ${name}`);
  const tasks = (await a.request('POST', '/execution/replication-tasks', { body: { exec_id: exec.exec_id } })).body.tasks;
  return { exec, tasks };
}

const SHOP = `connection: WAREHOUSE
schemata:
  exclude: ['*.*_tmp']
objects:
  shop.*:
  shop.orders:
    freshness_column: updated_at
    freshness_threshold: 6h
    columns:
      customer_id: [null_count, unique_count]
      amount: [min_max]
      status: [unique_count]
`;

test('a monitor that breaches freshness gives status warning with the data_stale event (issue acceptance)', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const { exec, tasks } = await run(a, 'monitors/shop.yaml', SHOP);
  assert.equal(exec.status, 'warning', JSON.stringify(exec));
  assert.equal(exec.error, null);
  assert.equal(exec.job_type, 'monitor');
  assert.equal(exec.rows, 5, 'rows: the row counts of the measured tables');
  assert.deepEqual([exec.status_map.success, exec.status_map.warning], [2, 1]);
  assert.deepEqual(
    tasks.map((x) => [x.task_id, x.stream_name, x.object, x.mode, x.status]),
    [
      ['task_1', 'shop.customers', 'shop.customers', 'monitor', 'success'],
      ['task_2', 'shop.legacy', 'shop.legacy', 'monitor', 'success'],
      ['task_3', 'shop.orders', 'shop.orders', 'monitor', 'warning'],
    ],
    'one task per object in wildcard order; shop.load_tmp is excluded',
  );
  const orders = tasks[2];
  assert.match(orders.error, /^data_stale: shop\.orders: max\(updated_at\) = \S+Z is 7h\d*m?\d*s? old \(\d+(\.\d+)? s\), over the freshness_threshold 6h \(21600 s\)$/);
  const m = orders.metrics;
  assert.equal(m.row_count, 3);
  assert.equal(m.freshness.column, 'updated_at');
  assert.equal(m.freshness.threshold_seconds, 21600);
  assert.equal(m.freshness.stale, true);
  assert.ok(Math.abs(m.freshness.age_seconds - 25200) < 120, `age ${m.freshness.age_seconds}`);
  assert.match(m.freshness.max_value, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  assert.deepEqual(m.columns, { customer_id: { null_count: 1, unique_count: 1 }, amount: { min: 1, max: 7.25 }, status: { unique_count: 2 } });
  assert.deepEqual(m.schema, [
    { name: 'id', type: 'integer' }, { name: 'customer_id', type: 'integer' }, { name: 'amount', type: 'numeric' },
    { name: 'status', type: 'text' }, { name: 'updated_at', type: 'timestamp with time zone' },
  ]);
  assert.equal(m.events.length, 1);
  assert.equal(m.events[0].type, 'data_stale');
  assert.equal(`data_stale: ${m.events[0].message}`, orders.error);
  for (const line of ['row_count: 3', 'column customer_id: null_count=1 unique_count=1', 'column amount: min=1 max=7.25', `event data_stale: ${m.events[0].message}`]) {
    assert.ok(orders.output.includes(`${line}\n`), `output has "${line}":\n${orders.output}`);
  }
  assert.deepEqual(tasks[0].metrics, { row_count: 2, freshness: null, columns: {}, schema: [{ name: 'id', type: 'integer' }, { name: 'name', type: 'text' }], events: [] });
  assert.equal(tasks[0].error, null);
});

test('the next run compares with the baseline: table_added, table_dropped, column_added, column_type_altered; then no events once seen', async (t) => {
  const a = await ready(t);
  if (!a) return;
  await sql(`alter table shop.orders add column note text;
    update shop.orders set updated_at = now();
    alter table shop.customers alter column id type bigint;
    create table shop.products (sku text); insert into shop.products values ('a');
    drop table shop.legacy;
    create table shop.more_tmp (id int);`);
  const second = await run(a, 'monitors/shop.yaml');
  assert.equal(second.exec.status, 'warning');
  const events = Object.fromEntries(second.tasks.map((x) => [x.stream_name, x.metrics.events.map((e: any) => `${e.type}: ${e.message}`)]));
  const baselineId = (await a.request('GET', `/execution/list?limit=2&filters=${encodeURIComponent(JSON.stringify({ job_id: jobs['monitors/shop.yaml'] }))}`)).body.executions[1].exec_id;
  assert.deepEqual(events, {
    'shop.customers': ['column_type_altered: shop.customers: column id changed type from integer to bigint'],
    'shop.orders': ['column_added: shop.orders: column note (text) added'],
    'shop.products': [`table_added: shop.products: table added to shop.* since execution ${baselineId}`],
    'shop.legacy': [`table_dropped: shop.legacy: table dropped from shop.* since execution ${baselineId}`],
  });
  assert.deepEqual(second.tasks.map((x) => [x.stream_name, x.status]), [
    ['shop.customers', 'warning'], ['shop.orders', 'warning'], ['shop.products', 'warning'], ['shop.legacy', 'warning'],
  ]);
  const fresh = second.tasks[1].metrics.freshness;
  assert.deepEqual([fresh.stale, fresh.age_seconds < 600], [false, true]);
  assert.deepEqual(second.tasks[3].metrics, { row_count: null, freshness: null, columns: {}, schema: [], events: second.tasks[3].metrics.events });

  const third = await run(a, 'monitors/shop.yaml');
  assert.equal(third.exec.status, 'success', JSON.stringify(third.tasks.map((x) => x.error)));
  assert.deepEqual(third.tasks.map((x) => x.stream_name), ['shop.customers', 'shop.orders', 'shop.products'], 'the dropped table is not reported twice');
});

test('an explicit object that does not exist and a configured column that does not exist fail their tasks', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const body = 'connection: WAREHOUSE\nobjects:\n  shop.nope:\n  shop.customers:\n    columns:\n      ghost: [null_count]\n  shop.products:\n    freshness_column: made_at\n';
  const { exec, tasks } = await run(a, 'monitors/bad.yaml', body);
  assert.equal(exec.status, 'error');
  assert.equal(exec.error, 'shop.nope: object shop.nope does not exist (and 2 more)');
  assert.deepEqual(tasks.map((x) => [x.stream_name, x.status, x.error]), [
    ['shop.nope', 'error', 'object shop.nope does not exist'],
    ['shop.customers', 'error', 'column ghost does not exist in shop.customers'],
    ['shop.products', 'error', 'column made_at does not exist in shop.products'],
  ]);
});

test('an unknown or unreachable connection fails the execution before any task', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const nope = await run(a, 'monitors/nope.yaml', 'connection: NOPE\nobjects:\n  shop.orders:\n');
  assert.deepEqual([nope.exec.status, nope.exec.error, nope.tasks], ['error', 'connection NOPE not found', []]);
  const broken = await run(a, 'monitors/broken.yaml', 'connection: BROKEN\nobjects:\n  shop.orders:\n');
  assert.equal(broken.exec.status, 'error');
  assert.match(broken.exec.error, /^could not connect to 'BROKEN'/);
  assert.ok(!broken.exec.error.includes('s3cret-pw'));
});

test('cancelling a running monitor stops its statement in the database', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const saved = await a.request('POST', '/project/file/save', { body: { file: { name: 'monitors/slow.yaml', body: 'connection: WAREHOUSE\nobjects:\n  slow.v:\n' } } });
  const started = await a.request('POST', '/project/job/run', { body: { job_id: saved.body.default_job_id } });
  const execId = started.body.exec_id;
  const sleeping = async () => {
    const c = new pg.Client({ connectionString: db!.url });
    await c.connect();
    try {
      return (await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and query like '%COUNT(*)%slow%' and pid <> pg_backend_pid()", [db!.name])).rows[0].n as number;
    } finally {
      await c.end();
    }
  };
  await eventually(async () => ((await sleeping()) > 0 ? true : undefined), 10_000, 'the monitor statement to start');
  const cancel = await a.request('POST', '/execution/cancel', { body: { exec_id: execId } });
  assert.deepEqual(cancel.body, { exec_id: execId, status: 'cancelled' });
  await eventually(async () => ((await sleeping()) === 0 ? true : undefined), 5_000, 'the statement to be cancelled');
  const tasks = (await a.request('POST', '/execution/replication-tasks', { body: { exec_id: execId, exclude_output: true } })).body.tasks;
  assert.deepEqual(tasks.map((x: any) => [x.stream_name, x.status]), [['slow.v', 'cancelled']]);
});

test('a DuckDB monitor: "*" column metrics on every column, typed min/max, fresh data is success', async (t) => {
  const a = await ready(t);
  if (!a) return;
  await duckExec(lakeFile, `create schema ev;
    create table ev.events (id bigint, ts timestamp, day date, v double, flag boolean, name varchar);
    insert into ev.events values (1, now()::timestamp, '2025-01-02', 1.5, true, 'b'), (2, '2024-05-06 07:08:09.25', null, -2, false, 'a'), (3, null, '2023-12-31', null, null, null);`);
  const body = "connection: LAKE\nobjects:\n  ev.events:\n    freshness_column: ts\n    freshness_threshold: 1d\n    columns:\n      '*': [null_count, min_max]\n      id: [unique_count]\n";
  const { exec, tasks } = await run(a, 'monitors/lake.yaml', body);
  assert.equal(exec.status, 'success', JSON.stringify(tasks.map((x) => x.error)));
  const m = tasks[0].metrics;
  assert.equal(m.row_count, 3);
  assert.equal(m.freshness.stale, false);
  assert.deepEqual(m.columns.id, { null_count: 0, unique_count: 3, min: 1, max: 3 });
  assert.deepEqual(m.columns.day, { null_count: 1, min: '2023-12-31', max: '2025-01-02' });
  assert.deepEqual(m.columns.v, { null_count: 1, min: -2, max: 1.5 });
  assert.deepEqual(m.columns.flag, { null_count: 1, min: false, max: true });
  assert.deepEqual(m.columns.name, { null_count: 1, min: 'a', max: 'b' });
  assert.equal(m.columns.ts.min, '2024-05-06T07:08:09.25');
  assert.deepEqual(m.schema.map((c: any) => c.type), ['BIGINT', 'TIMESTAMP', 'DATE', 'DOUBLE', 'BOOLEAN', 'VARCHAR']);
});
