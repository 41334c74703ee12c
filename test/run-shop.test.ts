/**
 * The `shop` acceptance examples that execute: A3 run and its
 * idempotent re-run, A4/A5 run parts, A7 seed types, A13 `test` after A3,
 * A19 empty selection, A22 the DuckDB thread cap and A24 independent
 * sub-projects. DuckDB unless noted; A3 and A7 also on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { commandHelp } from '../cli/build-command/help.js';
import { build, fatal, logLines, project, withEnv, writeFiles } from './helpers/build-cli.js';
import { payload, record, totals } from './helpers/run-payload.js';
import { duckWarehouse, pgWarehouse, type Warehouse } from './helpers/warehouse.js';

const pgWh = pgWarehouse('run_shop');
before(() => pgWh.setup());
after(() => pgWh.close());
const duck = duckWarehouse();

const RAW_ORDERS = 'id,customer_id,amount,status,updated_at\n1,10,100,placed,2024-01-05\n2,11,250,shipped,2024-01-20\n3,10,75,placed,2024-02-03\n';
const SHOP = {
  'raw_orders.csv': RAW_ORDERS,
  'staging/stg_orders.sql': "/**\nmode: view\ntags: [staging]\n**/\nselect id, customer_id, amount, status, updated_at from {{ ref('raw_orders') }}\n",
  'marts/fct_orders.sql':
    '-- {mode: full-refresh, tests: [{not_null: [customer_id]}, {unique: customer_id}]}\nselect customer_id, sum(amount) as total from staging.stg_orders group by 1\n',
};

const A3_RECORDS = [
  { name: 'public.raw_orders', type: 'seed', mode: 'full-refresh', status: 'success', error: '', rows: 3, bytes: 121 },
  { name: 'staging.stg_orders', type: 'model', mode: 'view', status: 'success', error: '', rows: 0, bytes: 0 },
  { name: 'marts.fct_orders', type: 'model', mode: 'full-refresh', status: 'success', error: '', rows: 2, bytes: 0 },
];
const A3_TOTALS = { total: 3, ok: 3, failed: 0, skipped: 0, rows: 5, bytes: 121, ok_names: 'public.raw_orders,staging.stg_orders,marts.fct_orders' };

/** Asserts the A3 payload exactly, durations aside (numbers of seconds with at most 3 decimals). */
function assertA3(dir: string, wh: Warehouse, r: Awaited<ReturnType<typeof build>>): void {
  assert.equal(r.code, 0, r.err);
  const p = payload(r);
  assert.deepEqual(Object.keys(p), ['path', 'target', 'results', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names', 'tests']);
  assert.equal(p.path, dir);
  assert.equal(p.target, wh.target);
  for (const rec of p.results) {
    assert.deepEqual(Object.keys(rec), ['name', 'type', 'mode', 'duration', 'status', 'error', 'rows', 'bytes']);
    // At most 3 decimals, compared as text: 1.001 * 1000 is 1000.9999999999999 in binary floating point.
    assert.ok(rec.duration >= 0 && Number(rec.duration.toFixed(3)) === rec.duration, `duration ${rec.duration}`);
  }
  assert.deepEqual(
    p.results.map(({ duration: _d, ...rest }) => rest),
    A3_RECORDS,
  );
  assert.deepEqual(totals(r), A3_TOTALS);
}

async function assertShopTables(wh: Warehouse, dir: string): Promise<void> {
  const schemas = await wh.query(dir, "select schema_name from information_schema.schemata where schema_name in ('public', 'staging', 'marts') order by 1");
  assert.deepEqual(schemas.map((s) => s.schema_name), ['marts', 'public', 'staging']);
  assert.deepEqual(await wh.query(dir, 'select customer_id, total from marts.fct_orders order by 1'), [
    { customer_id: '10', total: '175' },
    { customer_id: '11', total: '250' },
  ]);
}

describe('A3 run', () => {
  test('duckdb: exact payload, tables, and an identical re-run', async () => {
    const dir = duck.project(SHOP);
    assertA3(dir, duck, await build('run', dir, '--json'));
    await assertShopTables(duck, dir);
    assertA3(dir, duck, await build('run', dir, '--json'));
    await assertShopTables(duck, dir);
  });

  test('postgres: exact payload and tables', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const dir = pgWh.project(SHOP, 'defaults:\n  schema: a3_first\n');
    const r = await build('run', dir, ...pgWh.args, '--json');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      payload(r).results.map((x) => [x.name, x.status, x.rows, x.bytes]),
      [['a3_first.raw_orders', 'success', 3, 121], ['a3_first.stg_orders', 'success', 0, 0], ['a3_first.fct_orders', 'success', 2, 0]],
    );
    assert.deepEqual(await pgWh.query(dir, 'select customer_id, total from a3_first.fct_orders order by 1'), [
      { customer_id: '10', total: '175' },
      { customer_id: '11', total: '250' },
    ]);
  });

  test('postgres: re-running a project whose seed has a dependent view succeeds (idempotent)', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const dir = pgWh.project(SHOP);
    assertA3(dir, pgWh, await build('run', dir, ...pgWh.args, '--json'));
    assertA3(dir, pgWh, await build('run', dir, ...pgWh.args, '--json'));
    await assertShopTables(pgWh, dir);
  });
});

describe('A4 / A5 run parts', () => {
  const devConfig = 'dev: {schema: dev_${DEV_USER}}\n';

  test('A4: dev mode builds into the dev schema; an unset DEV_USER fails run unless --prod', async () => {
    const dir = duck.project(SHOP, devConfig);
    const dev = await withEnv({ DEV_USER: 'ann' }, () => build('run', dir, '--json'));
    assert.equal(dev.code, 0, dev.err);
    assert.equal(payload(dev).ok_names, 'dev_ann.raw_orders,dev_ann.stg_orders,dev_ann.fct_orders');
    assert.deepEqual(await duck.query(dir, 'select count(*) as n from dev_ann.fct_orders'), [{ n: '2' }]);

    const unset = await withEnv({ DEV_USER: undefined }, () => build('run', dir));
    assert.equal(unset.code, 1);
    assert.equal(unset.out, '');
    assert.equal(
      fatal(unset),
      `could not load build project from ${dir}: ` +
        'service_build.yml: dev.schema uses ${DEV_USER} but DEV_USER is not set.\nSet it in ~/.service/env.yaml under `env:` or export it in the shell,\nor pass --schema <name>.',
    );
    const prod = await withEnv({ DEV_USER: undefined }, () => build('run', dir, '--prod', '--json'));
    assert.equal(prod.code, 0, prod.err);
    assert.equal(payload(prod).ok_names, A3_TOTALS.ok_names);
  });

  test('A5: an unresolved target fails run; --target and a fallback succeed', async () => {
    const dir = project({ 'service_build.yml': 'target: ${WH}\n', 'env.yaml': 'connections:\n  DUCK:\n    type: duckdb\n    instance: wh.duckdb\n', ...SHOP });
    const unset = await withEnv({ WH: undefined }, () => build('run', dir));
    assert.equal(unset.code, 1);
    assert.ok(unset.err.includes('service_build.yml: target uses ${WH} but WH is not set.'), unset.err);
    assert.ok(unset.err.includes('or pass --target <name>.'), unset.err);
    const flagged = await withEnv({ WH: undefined }, () => build('run', dir, '--target', 'DUCK', '--json'));
    assert.equal(flagged.code, 0, flagged.err);
    assert.equal(payload(flagged).ok, 3);
    writeFiles(dir, { 'service_build.yml': 'target: ${WH:-DUCK}\n' });
    const fallback = await withEnv({ WH: undefined }, () => build('run', dir, '--json'));
    assert.equal(fallback.code, 0, fallback.err);
    assert.equal(payload(fallback).target, 'DUCK');
  });
});

describe('A7 seed type inference', () => {
  const CODES = 'zip,qty,price,flag,day,memo,mixed\n007,1,1.50,true,2024-01-01,hello,1\n010,2,2,false,2024-01-02,,x\n';
  const expected: Record<string, string[]> = {
    duckdb: ['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'DATE', 'VARCHAR', 'VARCHAR'],
    postgres: ['text', 'bigint', 'double precision', 'boolean', 'date', 'text', 'text'],
  };
  for (const wh of [duck, pgWh]) {
    test(`${wh.kind}: column types, '007' kept as text, empty memo NULL`, async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'codes.csv': CODES }, 'defaults:\n  schema: types\n');
      const r = await build('run', dir, ...wh.args, '--json');
      assert.equal(r.code, 0, r.err);
      assert.deepEqual([record(r, 'types.codes').rows, record(r, 'types.codes').bytes], [2, Buffer.byteLength(CODES)]);
      const cols = await wh.query(dir, "select column_name, data_type from information_schema.columns where table_schema = 'types' and table_name = 'codes' order by ordinal_position");
      assert.deepEqual(cols.map((c) => c.column_name), ['zip', 'qty', 'price', 'flag', 'day', 'memo', 'mixed']);
      assert.deepEqual(cols.map((c) => c.data_type), expected[wh.kind]);
      assert.deepEqual(await wh.query(dir, 'select zip, memo, mixed, cast(day as varchar) as day from types.codes order by zip'), [
        { zip: '007', memo: 'hello', mixed: '1', day: '2024-01-01' },
        { zip: '010', memo: null, mixed: 'x', day: '2024-01-02' },
      ]);
    });
  }
});

describe('A13 test command after A3', () => {
  test('seed skipped, models ok; nothing materialized, no schema created', async () => {
    const dir = duck.project(SHOP);
    assert.equal((await build('run', dir, '--json')).code, 0);
    // Change what a run would write: `test` must not reload the seed nor rebuild the model.
    writeFiles(dir, {
      'raw_orders.csv': RAW_ORDERS + '4,12,40,placed,2024-02-11\n',
      'marts/fct_orders.sql': '-- {tests: [{unique: customer_id}]}\nselect customer_id, sum(amount) + 1000 as total from staging.stg_orders group by 1',
      'extra/new_model.sql': 'select 1 as id',
    });
    const r = await build('test', dir, '--json');
    assert.equal(r.code, 0, r.err);
    const entries = JSON.parse(r.out) as { name: string; type: string; status: string; error: string; duration: number }[];
    assert.deepEqual(
      entries.map(({ duration: _d, ...rest }) => rest),
      [
        { name: 'extra.new_model', type: 'test', status: 'ok', error: '' },
        { name: 'public.raw_orders', type: 'seed', status: 'skip', error: '' },
        { name: 'staging.stg_orders', type: 'test', status: 'ok', error: '' },
        { name: 'marts.fct_orders', type: 'test', status: 'ok', error: '' },
      ],
    );
    assert.equal(entries[1]!.duration, 0);
    assert.deepEqual(await duck.query(dir, 'select count(*) as n from public.raw_orders'), [{ n: '3' }]);
    assert.deepEqual(await duck.query(dir, 'select sum(total) as n from marts.fct_orders'), [{ n: '425' }]);
    assert.deepEqual(await duck.query(dir, "select count(*) as n from information_schema.schemata where schema_name = 'extra'"), [{ n: '0' }]);
    assert.ok(logLines(r.err).includes('INF Build Completed in ' + /in (\S+) \|/.exec(r.err)![1] + ' | 3 Successes | 0 Failures | 1 Skipped'), r.err);
  });
});

describe('A19 empty selection', () => {
  test('text prints "No models selected." and JSON the empty payload; exit 0', async () => {
    const dir = duck.project(SHOP);
    const text = await build('run', dir, '-s', 'tag:nothing');
    assert.deepEqual([text.code, text.out], [0, 'No models selected.\n']);
    const asJson = await build('run', dir, '-s', 'tag:nothing', '--json');
    assert.equal(asJson.code, 0, asJson.err);
    assert.equal(asJson.out, `{"path":${JSON.stringify(dir)},"target":"DUCK","results":[],"total":0,"ok":0,"failed":0,"skipped":0,"rows":0,"bytes":0,"ok_names":""}\n`);
  });
});

describe('A22 DuckDB thread cap', () => {
  test('--threads 8 logs the cap and runs nodes one at a time', async () => {
    const dir = duck.project(SHOP);
    const r = await build('run', dir, '--threads', '8');
    assert.equal(r.code, 0, r.err);
    const lines = logLines(r.err);
    assert.ok(lines.includes("INF target 'DUCK' is single-writer (duckdb): threads capped from 8 to 1"), r.err);
    // One at a time: every START is followed by that node's OK before the next START.
    // A finished table or seed line ends with the rows the target reported; a view's does not.
    const progress = lines.filter((l) => /^INF \[\d\/3\]/.test(l)).map((l) => l.replace(/ \.+ /, ' ').replace(/ \(\d+ms\)| \(\d+\.\d+s\)/, ''));
    assert.deepEqual(progress, [
      'INF [1/3] public.raw_orders (seed) START',
      'INF [1/3] public.raw_orders (seed) OK [3 rows]',
      'INF [2/3] staging.stg_orders (view) START',
      'INF [2/3] staging.stg_orders (view) OK',
      'INF [3/3] marts.fct_orders (full-refresh) START',
      'INF [3/3] marts.fct_orders (full-refresh) OK [2 rows]',
    ]);
  });
});

describe('A24 independent sub-projects', () => {
  test('-R runs each child; the failing child does not stop the other; totals aggregate', async () => {
    const repo = project({
      'sales/service_build.yml': 'target: DUCK\n',
      'sales/orders.sql': 'select 1 as id',
      'sales/items.sql': "select * from {{ ref('orders') }}",
      'hr/service_build.yml': 'target: DUCK\n',
      'hr/people.sql': 'select * from missing_people',
    });
    const r = await withEnv({ DUCK: `duckdb://${join(repo, 'wh.duckdb')}` }, () => build('run', repo, '-R', '--json'));
    assert.equal(r.code, 1, r.err);
    const p = JSON.parse(r.out) as Record<string, unknown> & { sub_projects: (Record<string, unknown> & { results: { name: string; status: string; error: string }[] })[] };
    assert.deepEqual(Object.keys(p), ['path', 'target', 'sub_projects', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names']);
    assert.deepEqual([p.path, p.target], [repo, '']);
    const [hr, sales] = p.sub_projects;
    assert.deepEqual(Object.keys(hr!), ['path', 'target', 'error', 'results', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names']);
    assert.deepEqual([hr!.path, hr!.target, hr!.error, hr!.total, hr!.ok, hr!.failed, hr!.ok_names], [join(repo, 'hr'), 'DUCK', '', 1, 0, 1, '']);
    assert.deepEqual(hr!.results.map((x) => [x.name, x.status]), [['public.people', 'error']]);
    assert.match(hr!.results[0]!.error, /^could not materialize model 'people' \(full-refresh\): .*missing_people/s);
    assert.deepEqual([sales!.path, sales!.error, sales!.total, sales!.ok, sales!.failed, sales!.rows, sales!.ok_names], [join(repo, 'sales'), '', 2, 2, 0, 2, 'public.orders,public.items']);
    assert.deepEqual(
      [p.total, p.ok, p.failed, p.skipped, p.rows, p.bytes, p.ok_names],
      [3, 2, 1, 0, 2, 0, 'public.orders,public.items'],
    );
    assert.deepEqual(await duck.query(repo, 'select count(*) as n from public.items'), [{ n: '1' }]);

    const noR = await withEnv({ DUCK: `duckdb://${join(repo, 'wh.duckdb')}` }, () => build('run', repo));
    assert.deepEqual([noR.code, noR.out, noR.err], [0, commandHelp('run'), `nothing to run: ${repo} has no service_build.yml and no --target was given\n`]);
  });
});
