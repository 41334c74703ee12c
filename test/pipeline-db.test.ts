// Pipeline steps on real databases (query and build steps, output limits): query steps on DuckDB (temp file) and PostgreSQL (temp database)
// with the 1000-row state limit; build steps on a DuckDB project publishing
// the run output object as state.<id> (run, failing run, list, compile,
// select override); model hooks run by the same step runner with model.*,
// target.* and the pipeline's store.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { runText, statuses, workspace, writeTree, type Workspace } from './helpers/pipeline-harness.js';

let ws: Workspace;
let db: TempDatabase | undefined;

const SHOP = {
  'models/service_build.yml': 'target: DUCK\nvars: {region: eu}\n',
  'models/raw_orders.csv': 'id,customer_id,amount\n1,10,100\n2,11,250\n3,10,75\n',
  'models/staging/stg_orders.sql': "/**\nmode: view\n**/\nselect id, customer_id, amount from {{ ref('raw_orders') }}\n",
  'models/marts/fct_orders.sql': [
    '/**',
    'mode: full-refresh',
    'hooks:',
    '  start:',
    "    - {type: set, key: 'started_{model.name}', value: '{model.full_name}'}",
    '  end:',
    "    - {type: query, connection: '{target.name}', query: \"create or replace table main.hook_log as select '{model.full_name}' as m, '{model.mode}' as mode, '{env.region}' as r\"}",
    "    - {type: check, check: 'store.started_fct_orders == \"marts.fct_orders\"'}",
    '**/',
    'select customer_id, sum(amount) as total from staging.stg_orders group by 1',
    '',
  ].join('\n'),
  'models/marts/broken.sql': "/**\nhooks: {start: [{type: log, message: 'about to fail'}]}\n**/\nselect * from no_such_table\n",
  'sql/count.sql': 'select count(*) as n from main.t',
};

before(async () => {
  let extra = '';
  if (await pgAvailable()) {
    db = await createTempDatabase('pipe_db');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("create table public.users (id int primary key, name text); insert into public.users values (1, 'ada'), (2, 'bob'), (3, 'cy')");
    await c.end();
    extra = `  WAREHOUSE:\n    url: ${db.url}\n`;
  }
  ws = workspace(extra);
  writeTree(ws.root, SHOP);
});

after(async () => {
  await db?.drop();
});

test('query steps on DuckDB: statements in order, last result as {columns, rows, row_count}; 1000 rows kept, row_count exact; file://', async () => {
  const out = await runText(
    [
      'steps:',
      '  - id: mk',
      '    type: query',
      '    connection: DUCK',
      "    query: 'create or replace table main.t as select range as i, range * 2 as d, current_date as day from range(1500); select count(*) as n from main.t'",
      '  - {id: q, query: "select i, d from main.t order by i", connection: DUCK}',
      '  - {id: f, type: query, connection: DUCK, query: file://sql/count.sql}',
      "  - {id: ok, check: 'state.mk.rows[0].n == 1500 and state.q.row_count == 1500 and length(state.q.rows) == 1000 and state.q.rows[999].d == 1998 and state.f.rows[0].n == 1500'}",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  assert.deepEqual(out.state.mk, { columns: ['n'], rows: [{ n: 1500 }], row_count: 1 });
  const q = out.state.q as any;
  assert.deepEqual(q.columns, ['i', 'd']);
  assert.equal(q.rows.length, 1000);
  assert.deepEqual(q.rows[0], { i: 0, d: 0 });
  assert.equal(q.row_count, 1500);
  assert.match(out.output.get('q')!.join('\n'), /statement 1\/1: select i, d from main\.t order by i\nstatement 1\/1: 1500 row\(s\)\ni +\| d/);
  const bad = await runText("steps:\n  - {id: q, type: query, connection: DUCK, query: 'select * from nowhere'}\n", ws);
  assert.match(bad.result.error!, /^q: statement 1 failed: .*nowhere/);
  const unknown = await runText("steps:\n  - {id: q, type: query, connection: '{env.C}', query: 'select 1'}\n", ws, { vars: { C: 'NOPE' } });
  assert.equal(unknown.result.error, 'q: connection NOPE not found');
});

test('query steps on PostgreSQL inside a loop: {loop.value} in SQL, one record per iteration', async (t) => {
  if (!(await requirePg(t))) return;
  const out = await runText(
    [
      'steps:',
      '  - id: each',
      '    type: group',
      '    loop: [1, 3]',
      '    steps:',
      "      - {id: q, type: query, connection: WAREHOUSE, query: 'select id, name, now() as at from public.users where id = {loop.value}'}",
      "      - {type: set, key: 'name_{loop.index}', value: '{state.q.rows[0].name}'}",
      "  - {id: n, type: query, connection: WAREHOUSE, query: 'select count(*)::int as n, sum(id) as s from public.users'}",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  assert.deepEqual(out.store, { name_0: 'ada', name_1: 'cy' });
  assert.equal(out.records.get('each.q[1]')!.status, 'success');
  const last = out.records.get('each.q[1]')!.state as any;
  assert.deepEqual(last.columns, ['id', 'name', 'at']);
  assert.equal(last.rows[0].id, 3);
  assert.match(last.rows[0].at, /^\d{4}-\d{2}-\d{2}T/);
  assert.deepEqual((out.state.n as any).rows, [{ n: 3, s: '6' }]);
});

test('build step: the run output object as state.<id>, check on state.transform.failed, model hooks with model.*, target.*, store', async () => {
  const out = await runText(
    [
      'steps:',
      '  - id: transform',
      '    build: models',
      "    exclude: broken",
      '  - check: state.transform.failed == 0',
      "  - {id: hook, type: query, connection: DUCK, query: 'select m, mode, r from main.hook_log'}",
      "  - log: 'build ok={state.transform.ok} names={state.transform.ok_names}'",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  const s = out.state.transform as any;
  assert.deepEqual(Object.keys(s), ['path', 'target', 'command', 'results', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names']);
  assert.equal(s.path, join(ws.root, 'models'));
  assert.equal(s.target, 'DUCK');
  assert.equal(s.command, 'run');
  assert.deepEqual(s.results.map((r: any) => [r.name, r.type, r.mode, r.status, r.error]), [
    ['public.raw_orders', 'seed', 'full-refresh', 'success', ''],
    ['staging.stg_orders', 'model', 'view', 'success', ''],
    ['marts.fct_orders', 'model', 'full-refresh', 'success', ''],
  ]);
  assert.deepEqual([s.total, s.ok, s.failed, s.skipped, s.rows], [3, 3, 0, 0, 5]);
  assert.ok(s.bytes > 0, 'seed bytes');
  assert.equal(s.ok_names, 'public.raw_orders,staging.stg_orders,marts.fct_orders');
  assert.deepEqual(out.result.build, s);
  assert.equal(out.result.rows, 5);
  assert.equal(out.store.started_fct_orders, 'marts.fct_orders');
  assert.deepEqual((out.state.hook as any).rows, [{ m: 'marts.fct_orders', mode: 'full-refresh', r: 'eu' }]);
  assert.equal(out.state.step_4, undefined, 'steps without an id publish no state.<id>');
  assert.deepEqual(out.records.get('step_4')!.state, { message: 'build ok=3 names=public.raw_orders,staging.stg_orders,marts.fct_orders' });
  const log = out.output.get('transform')!.join('\n');
  assert.match(log, /INF \[3\/3\] marts\.fct_orders \(full-refresh\) OK/);
  assert.match(log, /end hook step_1 \[fct_orders\]: statement 1\/1: create or replace table main\.hook_log/);
});

test('build step failures publish the state and fail the step with "build failed: <summary>"; select override; list and compile', async () => {
  const failing = await runText('steps:\n  - {id: b, build: models, select: [broken, fct_orders]}\n  - log: never\n', ws);
  assert.equal(failing.result.status, 'error');
  const s = failing.state.b as any;
  assert.deepEqual([s.total, s.ok, s.failed], [2, 1, 1]);
  assert.match(failing.records.get('b')!.error!, /^build failed: build completed with 1 error\(s\): marts\.broken: could not materialize model 'broken'/);
  assert.equal(failing.records.get('b')!.state !== null, true);
  assert.equal(failing.result.build !== null, true);
  assert.ok(failing.output.get('b')!.some((l) => l.includes('start hook step_1 [broken]: about to fail')));

  // The run's select override replaces the step's select.
  const sel = await runText('steps:\n  - {id: b, build: models, select: broken}\n', ws, { overrides: { select: ['stg_orders'] } });
  assert.equal(sel.result.status, 'success', sel.result.error ?? '');
  assert.equal((sel.state.b as any).ok_names, 'staging.stg_orders');

  // Hooks share the pipeline's store: the start hook's key is there for the end hook's check.
  const hooked = await runText('steps:\n  - {id: b, build: models, select: fct_orders}\n', ws);
  assert.equal(hooked.result.status, 'success', hooked.result.error ?? '');
  assert.equal(hooked.store.started_fct_orders, 'marts.fct_orders');

  const list = await runText("steps:\n  - {id: l, build: models, command: list, select: ['raw_orders', 'stg_orders']}\n", ws);
  assert.deepEqual(list.state.l, {
    path: join(ws.root, 'models'),
    target: 'DUCK',
    command: 'list',
    results: [
      { name: 'raw_orders', type: 'seed', mode: 'full-refresh', file: 'raw_orders.csv', table: 'public.raw_orders' },
      { name: 'stg_orders', type: 'model', mode: 'view', file: 'staging/stg_orders.sql', table: 'staging.stg_orders' },
    ],
    total: 2,
    ok: 2,
    failed: 0,
    skipped: 0,
  });
  const compiled = await runText('steps:\n  - {id: c, build: models, command: compile, select: stg_orders}\n', ws);
  const c = compiled.state.c as any;
  assert.deepEqual([c.command, c.order, c.total, c.ok, c.failed], ['compile', ['stg_orders'], 1, 1, 0]);
  assert.equal(c.nodes[0].sql.trim(), 'select id, customer_id, amount from public.raw_orders');
  assert.deepEqual(c.results, c.nodes);

  const missing = await runText('steps:\n  - {id: b, build: "{env.DIR}"}\n', ws, { vars: { DIR: 'nowhere' } });
  assert.equal(missing.result.error, 'b: build directory "nowhere" does not exist');
  const noTarget = await runText('steps:\n  - {id: b, build: sql}\n', ws);
  assert.match(noTarget.result.error!, /^b: build failed: No target specified/);
  assert.ok(noTarget.records.get('b')!.state !== null);
});

test('model hooks: a malformed entry and a failing end hook fail the model with the documented messages', async () => {
  writeTree(ws.root, {
    'hooked/service_build.yml': 'target: DUCK\n',
    'hooked/bad.sql': '/**\nhooks: {start: [{nothing: here}]}\n**/\nselect 1 as x\n',
    'hooked/endfail.sql': "/**\nhooks: {end: [{type: log, message: fine}, {check: 'model.name == \"other\"'}]}\n**/\nselect 1 as x\n",
  });
  const out = await runText('steps:\n  - {id: b, build: hooked, on_failure: quiet}\n', ws);
  assert.equal(out.result.status, 'success');
  assert.deepEqual(statuses(out), { b: 'error' });
  const byName = Object.fromEntries((out.state.b as any).results.map((r: any) => [r.name, r]));
  assert.equal(byName['public.bad'].error, "error parsing start hook 1 for model 'bad': step type cannot be determined; set \"type\"");
  assert.equal(byName['public.endfail'].error, "end hook failed for model 'endfail': step_2: check failed: model.name == \"other\"");
  assert.equal(byName['public.endfail'].rows, 1, 'the model was written: its rows count');
});
