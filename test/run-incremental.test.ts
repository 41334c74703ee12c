/**
 * Incremental models through `service build run` on real databases
 * (incremental models, ranges, A8, A16, A17): the service-style watermark flow, the
 * three merge strategies, dbt style with `{{ this }}`, `--range` chunks and
 * the chunk-failure resume hint.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../engine/state/sqlite-database.js';
import { build, compiledNode, logLines, warehouseCreated, withEnv, writeFiles } from './helpers/build-cli.js';
import { payload, record, statusRows } from './helpers/run-payload.js';
import { duckWarehouse, pgWarehouse } from './helpers/warehouse.js';

const pgWh = pgWarehouse('run_incr');
before(() => pgWh.setup());
after(() => pgWh.close());
const duck = duckWarehouse();

const RAW = 'id,customer_id,amount,status,updated_at\n1,10,100,placed,2024-01-05\n2,11,250,shipped,2024-01-20\n3,10,75,placed,2024-02-03\n';
/** A8's edit: row 3 shipped on 2024-02-10, row 4 added. */
const RAW_2 = 'id,customer_id,amount,status,updated_at\n1,10,100,placed,2024-01-05\n2,11,250,shipped,2024-01-20\n3,10,75,shipped,2024-02-10\n4,12,40,placed,2024-02-11\n';
const FRONT = '/**\nmode: incremental\nunique_key: id\nupdate_key: updated_at\n**/\n';
const ORDERS_INC = `${FRONT}select id, status, updated_at from {{ ref('raw_orders') }} where {{ incremental_where_cond() }}\n`;
const DBT_INC = `${FRONT}select id, status, updated_at from {{ ref('raw_orders') }}\n{% if is_incremental() %} where updated_at > (select max(updated_at) from {{ this }}) {% endif %}\n`;

const statuses = (rows: readonly Record<string, string | null>[]) => rows.map((r) => `${r.id}:${r.status}`);

for (const wh of [duck, pgWh]) {
  describe(`incremental on ${wh.kind}`, () => {
    test('A8: first run via the full-refresh path, then the watermark merges 2 staged rows; -f rebuilds', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'raw_orders.csv': RAW, 'orders_inc.sql': ORDERS_INC }, 'defaults:\n  schema: a8\n');
      const compiled = await build('compile', dir, '--json');
      assert.match(compiledNode(compiled, 'orders_inc').sql as string, / where 1=1$/);

      const first = await build('run', dir, ...wh.args, '--json');
      assert.equal(first.code, 0, first.err);
      assert.deepEqual(statusRows(first), [['a8.raw_orders', 'success', 3], ['a8.orders_inc', 'success', 3]]);

      writeFiles(dir, { 'raw_orders.csv': RAW_2 });
      const second = await build('run', dir, ...wh.args, '--json', '-d');
      assert.equal(second.code, 0, second.err);
      assert.deepEqual(statusRows(second), [['a8.raw_orders', 'success', 4], ['a8.orders_inc', 'success', 2]]);
      assert.ok(second.err.includes(`"updated_at" > '2024-02-03'`), second.err);
      const rows = await wh.query(dir, 'select id, status from a8.orders_inc order by id');
      assert.deepEqual(statuses(rows), ['1:placed', '2:shipped', '3:shipped', '4:placed']);

      const refreshed = await build('run', dir, ...wh.args, '--json', '-f', '-s', 'orders_inc');
      assert.equal(refreshed.code, 0, refreshed.err);
      assert.deepEqual(payload(refreshed).results.map((r) => [r.name, r.mode, r.rows]), [['a8.orders_inc', 'full-refresh', 4]]);
      assert.equal((await wh.query(dir, 'select id from a8.orders_inc')).length, 4);
    });

    test('merge strategies: an updated row and a new row', async (t) => {
      if (!(await wh.ready(t))) return;
      const model = (strategy: string) =>
        `/**\nmode: incremental\nunique_key: id\nupdate_key: u\nmerge_strategy: ${strategy}\n**/\nselect id, status, u from {{ ref('src') }} where {{ incremental_where_cond() }}`;
      const dir = wh.project(
        { 'src.csv': 'id,status,u\n1,a,1\n2,b,2\n', 'm_di.sql': model('delete+insert'), 'm_ui.sql': model('update+insert'), 'm_in.sql': model('insert') },
        'defaults:\n  schema: merges\n',
      );
      const first = await build('run', dir, ...wh.args, '--json');
      assert.equal(first.code, 0, first.err);
      writeFiles(dir, { 'src.csv': 'id,status,u\n1,a,1\n2,B,3\n3,c,3\n' });
      const second = await build('run', dir, ...wh.args, '--json');
      assert.equal(second.code, 0, second.err);
      assert.deepEqual(statusRows(second), [
        ['merges.src', 'success', 3],
        ['merges.m_di', 'success', 2],
        ['merges.m_in', 'success', 2],
        ['merges.m_ui', 'success', 2],
      ]);
      const rowsOf = async (m: string) => (await wh.query(dir, `select id, status, u from merges.${m} order by id`)).map((r) => `${r.id}:${r.status}:${r.u}`);
      assert.deepEqual(await rowsOf('m_di'), ['1:a:1', '2:B:3', '3:c:3']);
      assert.deepEqual(await rowsOf('m_ui'), ['1:a:1', '2:B:3', '3:c:3']);
      assert.deepEqual(await rowsOf('m_in'), ['1:a:1', '2:b:2', '3:c:3'], 'insert keeps the existing row 2');
    });

    test('dbt style: is_incremental() and {{ this }} filter the second run', async (t) => {
      if (!(await wh.ready(t))) return;
      const dir = wh.project({ 'raw_orders.csv': RAW, 'orders_dbt.sql': DBT_INC }, 'defaults:\n  schema: dbt\n');
      const first = await build('run', dir, ...wh.args, '--json');
      assert.equal(first.code, 0, first.err);
      assert.deepEqual(statusRows(first), [['dbt.raw_orders', 'success', 3], ['dbt.orders_dbt', 'success', 3]]);
      writeFiles(dir, { 'raw_orders.csv': RAW_2 });
      const second = await build('run', dir, ...wh.args, '--json', '-d');
      assert.equal(second.code, 0, second.err);
      assert.deepEqual(statusRows(second), [['dbt.raw_orders', 'success', 4], ['dbt.orders_dbt', 'success', 2]]);
      assert.ok(second.err.includes('where updated_at > (select max(updated_at) from dbt.orders_dbt)'), second.err);
      assert.deepEqual(statuses(await wh.query(dir, 'select id, status from dbt.orders_dbt order by id')), ['1:placed', '2:shipped', '3:shipped', '4:placed']);
    });
  });
}

describe('A9 merge strategy validation', () => {
  test("'update_insert' fails the load with nothing on stdout; 'update+insert' runs", async () => {
    const dir = duck.project({ 'raw_orders.csv': RAW, 'orders_inc.sql': ORDERS_INC.replace('update_key: updated_at\n', 'update_key: updated_at\nmerge_strategy: update_insert\n') });
    const bad = await build('run', dir, '--json');
    assert.deepEqual([bad.code, bad.out], [1, '']);
    assert.ok(
      bad.err.endsWith(
        `fatal: could not load build project from ${dir}: model 'orders_inc': unknown merge_strategy 'update_insert'; expected one of: delete+insert, update+insert, insert\n`,
      ),
      bad.err,
    );
    assert.equal(warehouseCreated(dir), false, 'nothing ran');
    writeFiles(dir, { 'orders_inc.sql': ORDERS_INC.replace('update_key: updated_at\n', 'update_key: updated_at\nmerge_strategy: update+insert\n') });
    for (const rows of [3, 0]) {
      const good = await build('run', dir, '--json');
      assert.equal(good.code, 0, good.err);
      assert.equal(record(good, 'public.orders_inc').rows, rows);
    }
  });
});

describe('incremental node errors', () => {
  test('no unique_key fails the node even on the first run', async () => {
    const dir = duck.project({ 'nokey.sql': "/**\nmode: incremental\nupdate_key: u\n**/\nselect 1 as id, 1 as u where {{ incremental_where_cond() }}" });
    const r = await build('run', dir, '--json');
    assert.equal(r.code, 1);
    assert.deepEqual(
      payload(r).results.map((x) => [x.name, x.status, x.error]),
      [['public.nokey', 'error', "model 'nokey' uses incremental mode but has no unique_key defined in config()"]],
    );
    assert.deepEqual(await duck.query(dir, "select table_name from information_schema.tables where table_name = 'nokey'"), []);
  });
});

describe('A16 --range', () => {
  test('calendar months: 3 chunks, 2 rows staged, table still 4 rows, no state written', async () => {
    const dir = duck.project({ 'raw_orders.csv': RAW, 'orders_inc.sql': ORDERS_INC, 'orders_dbt.sql': DBT_INC });
    const state = join(dir, 'state.db');
    await withEnv({ SERVICE_STATE: state }, async () => {
      assert.equal((await build('run', dir, '--json')).code, 0);
      writeFiles(dir, { 'raw_orders.csv': RAW_2 });
      const run2 = await build('run', dir, '--json');
      assert.equal(run2.code, 0, run2.err);
      assert.equal(record(run2, 'public.orders_inc').rows, 2);
    });
    const stateRow = () => {
      const db = openDatabase(state, { readonly: true });
      try {
        return db.prepare("select value, updated_at from service_build_watermarks where model = 'public.orders_inc'").get();
      } finally {
        db.close();
      }
    };
    const before = stateRow();
    assert.deepEqual((before as { value: string }).value, "'2024-02-11'");

    const ranged = await withEnv({ SERVICE_STATE: state }, () => build('run', dir, '--range', '2024-01-31,2024-04-01,1mo', '-s', 'orders_inc', '--json', '-d'));
    assert.equal(ranged.code, 0, ranged.err);
    assert.deepEqual(statusRows(ranged), [['public.orders_inc', 'success', 2]]);
    const chunks = logLines(ranged.err)
      .map((l) => l.replace(/^\S+ \S+ /, ''))
      .filter((l) => l.startsWith('DBG          chunk '))
      .map((l) => l.replace(/ \(\d+(ms|\.\ds)\)$/, ''));
    assert.deepEqual(chunks, [
      'DBG          chunk 1/3  updated_at=[2024-01-31T00:00:00Z, 2024-02-29T00:00:00Z)   OK',
      'DBG          chunk 2/3  updated_at=[2024-02-29T00:00:00Z, 2024-03-31T00:00:00Z)   OK',
      'DBG          chunk 3/3  updated_at=[2024-03-31T00:00:00Z, 2024-04-01T00:00:00Z)   OK',
    ]);
    assert.deepEqual(await duck.query(dir, 'select count(*) as n from public.orders_inc'), [{ n: '4' }]);
    assert.deepEqual(stateRow(), before, '--range never writes state');

    const dbt = await build('run', dir, '--range', '2024-01-31,2024-04-01,1mo', '-s', 'orders_dbt', '--json');
    assert.equal(dbt.code, 1);
    assert.deepEqual(
      payload(dbt).results.map((r) => [r.name, r.status, r.error]),
      [['public.orders_dbt', 'error', "model 'orders_dbt' uses is_incremental() (dbt style); --range requires incremental_where_cond() (service style)"]],
    );

    const backwards = await build('run', dir, '--range', '2024-03-01,2024-01-01');
    assert.deepEqual([backwards.code, backwards.out], [2, '']);
    assert.equal(backwards.err, `error: invalid --range "2024-03-01,2024-01-01": start must be before end\nRun 'service build run --help' for usage.\n`);
  });
});

describe('A17 chunk failure on postgres', () => {
  test('chunk 2 fails: chunk 1 stays committed, chunk 3 does not run, the resume hint is logged', async (t) => {
    if (!(await pgWh.ready(t))) return;
    const model = `${FRONT}select id, status, updated_at, {% if boom %}1 / (extract(month from updated_at)::int - 2){% else %}0{% endif %} as x from {{ ref('raw_orders') }} where {{ incremental_where_cond() }}\n`;
    const dir = pgWh.project({ 'raw_orders.csv': RAW_2, 'orders_inc.sql': model }, 'defaults:\n  schema: a17\n');
    const first = await build('run', dir, ...pgWh.args, '--json');
    assert.equal(first.code, 0, first.err);
    assert.equal(record(first, 'a17.orders_inc').rows, 4);

    const r = await build('run', dir, ...pgWh.args, '-s', 'orders_inc', '--vars', '{"boom": true}', '--range', '2024-01-01,2024-04-01,1mo', '-d');
    assert.equal(r.code, 1, r.err);
    const message =
      "build[orders_inc]: chunk 2 failed ([2024-02-01T00:00:00Z, 2024-03-01T00:00:00Z)); resume with --range '2024-02-01T00:00:00Z,2024-04-01T00:00:00Z,1mo': could not create temp table for incremental merge on 'orders_inc': division by zero";
    assert.equal(r.out, `Errors:\n  - a17.orders_inc:\n      ${message}\n`);
    assert.ok(r.err.includes(`fatal: build execution failed: build completed with 1 error(s): a17.orders_inc: ${message}\n`), r.err);
    const lines = logLines(r.err).map((l) => l.replace(/^\S+ \S+ /, ''));
    const hint = lines.indexOf('INF ▶ chunk 2/3 failed — resume with:');
    assert.ok(hint >= 0, r.err);
    assert.equal(lines[hint + 1], "INF   service build run --range '2024-02-01T00:00:00Z,2024-04-01T00:00:00Z,1mo' -s orders_inc");
    assert.deepEqual(
      lines.filter((l) => l.startsWith('DBG          chunk ')).map((l) => l.replace(/ \(\d+(ms|\.\ds)\)$/, '')),
      [
        'DBG          chunk 1/3  updated_at=[2024-01-01T00:00:00Z, 2024-02-01T00:00:00Z)   OK',
        'DBG          chunk 2/3  updated_at=[2024-02-01T00:00:00Z, 2024-03-01T00:00:00Z)   FAIL',
      ],
    );
    // The record reports the rows chunk 1 merged (January: ids 1, 2), not 0.
    const json = await build('run', dir, ...pgWh.args, '-s', 'orders_inc', '--vars', '{"boom": true}', '--range', '2024-01-01,2024-04-01,1mo', '--json');
    assert.equal(json.code, 1);
    const failed = record(json, 'a17.orders_inc');
    assert.deepEqual([failed.status, failed.rows, failed.error], ['error', 2, message]);
    assert.equal(payload(json).rows, 2);
    // January (ids 1, 2) merged with x = 1 / (1 - 2) = -1; February and later untouched.
    assert.deepEqual(
      (await pgWh.query(dir, 'select id, x from a17.orders_inc order by id')).map((row) => `${row.id}:${row.x}`),
      ['1:-1', '2:-1', '3:0', '4:0'],
    );
  });
});
