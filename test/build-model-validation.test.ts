// Load- and compile-time model validation through the CLI (modes and
// aliases, load-time validation, incremental styles, data tests, A9, A20): modes and aliases, incremental and
// range rules, data-test definitions, and multi-statement bodies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, compiledNode, duckProject, fatal, json, logLines, warehouseCreated } from './helpers/build-cli.js';

async function modeOf(body: string, config?: string): Promise<{ mode: unknown; logs: string[] }> {
  const dir = duckProject({ 'm.sql': body }, config);
  const r = await build('list', dir, '--json');
  assert.equal(r.code, 0, `${body}: ${r.err}`);
  return { mode: (json(r) as { type: string }[])[0]!.type, logs: logLines(r.err) };
}

/** A load error: exit 1, nothing on stdout, the fatal line `could not load build project from <abs>: <message>`. */
async function loadError(files: Record<string, string>, message: string, config?: string): Promise<void> {
  const dir = duckProject(files, config);
  for (const command of ['list', 'compile']) {
    const r = await build(command, dir, '--json');
    assert.equal(r.code, 1, `${command}: ${message}`);
    assert.equal(r.out, '');
    assert.equal(r.err, `fatal: could not load build project from ${dir}: ${message}\n`);
  }
}

test('modes and aliases that resolve (trimmed, lower-cased)', async () => {
  const cases: [string, string][] = [
    ['mode: full-refresh', 'full-refresh'],
    ['mode: view', 'view'],
    ['mode: truncate', 'truncate'],
    ['mode: append', 'append'],
    ['{mode: incremental, update_key: ts}', 'incremental'],
    ['materialized: view', 'view'],
    ['{materialized: incremental, update_key: ts}', 'incremental'],
    ['mode: table', 'full-refresh'],
    ['materialized: table', 'full-refresh'],
    ['mode: "  VIEW "', 'view'],
    ['materialized: " Table"', 'full-refresh'],
    ['{mode: view, materialized: table}', 'view'],
  ];
  for (const [fm, want] of cases) {
    const { mode, logs } = await modeOf(`/**\n${fm}\n**/\nselect 1`);
    assert.equal(mode, want, fm);
    assert.deepEqual(logs, [], fm);
  }
  assert.equal((await modeOf('select 1', 'target: DUCK\ndefaults: {mode: view}\n')).mode, 'view');
  assert.equal((await modeOf('select 1')).mode, 'full-refresh');
  const snap = await modeOf('-- {mode: snapshot}\nselect 1');
  assert.equal(snap.mode, 'append');
  assert.deepEqual(snap.logs, ["WRN model 'm': 'snapshot' mode is deprecated and means append-only insert; use 'append'. 'snapshot' will mean SCD2 in a future release"]);
});

test('mode and materialized errors', async () => {
  const cases: [string, string][] = [
    ['mode: ephemeral', "model 'm': ephemeral models are not supported; use view or table"],
    ['materialized: ephemeral', "model 'm': ephemeral models are not supported; use view or table"],
    ['materialized: materialized_view', "model 'm': materialized 'materialized_view' is not supported; use view or table"],
    ['materialized: materializedview', "model 'm': materialized 'materializedview' is not supported; use view or table"],
    ['mode: bogus', "model 'm': unknown mode 'bogus'; expected one of: append, full-refresh, incremental, truncate, view"],
    ['materialized: bogus', "model 'm': unknown materialized value 'bogus'; expected table, view, or incremental"],
  ];
  for (const [fm, message] of cases) await loadError({ 'm.sql': `/**\n${fm}\n**/\nselect 1` }, message);
});

test('mode incremental requires update_key (front-matter or defaults.mode)', async () => {
  await loadError({ 'm.sql': '-- {mode: incremental, unique_key: id}\nselect 1' }, "model 'm': mode 'incremental' requires update_key");
  await loadError({ 'm.sql': 'select 1' }, "model 'm': mode 'incremental' requires update_key", 'target: DUCK\ndefaults: {mode: incremental}\n');
  assert.equal((await modeOf('select 1', 'target: DUCK\ndefaults: {mode: incremental, update_key: ts}\n')).mode, 'incremental');
});

test('A9 unknown merge_strategy: exact fatal line, exit 1, stdout empty; update+insert works', async () => {
  const body = (s: string) => `/**\nmode: incremental\nunique_key: id\nupdate_key: updated_at\nmerge_strategy: ${s}\n**/\nselect id, status, updated_at from {{ ref('raw_orders') }} where {{ incremental_where_cond() }}`;
  const seed = 'id,status,updated_at\n1,placed,2024-01-05\n';
  await loadError(
    { 'raw_orders.csv': seed, 'orders_inc.sql': body('update_insert') },
    "model 'orders_inc': unknown merge_strategy 'update_insert'; expected one of: delete+insert, update+insert, insert",
  );
  const dir = duckProject({ 'raw_orders.csv': seed, 'orders_inc.sql': body('update+insert') });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  const n = compiledNode(r, 'orders_inc');
  assert.equal(n.merge_strategy, 'update+insert');
  assert.equal(n.sql, 'select id, status, updated_at from public.raw_orders where 1=1');
  assert.equal(warehouseCreated(dir), false);
});

test('range.* validation', async () => {
  const inc = 'mode: incremental\nunique_key: id\nupdate_key: ts\n';
  const svc = "select 1 as id, now() as ts where {{ incremental_where_cond() }}";
  const cases: [string, string, string][] = [
    [`${inc}range: {start: '2024-01-01'}`, svc, "model 'm': range.start requires range.advance"],
    ["mode: full-refresh\nrange: {advance: 1d}", svc, "model 'm': range.* requires mode: incremental"],
    [`${inc}range: {advance: 1x}`, svc, "model 'm': invalid range.advance: invalid duration '1x': expected <int><unit> with unit in ms,s,m,h,d,w,mo,y"],
    [`${inc}range: {advance: 1d, lookback: soon}`, svc, "model 'm': invalid range.lookback: invalid duration 'soon': expected <int><unit> with unit in ms,s,m,h,d,w,mo,y"],
    [`${inc}range: {advance: 1d}`, 'select 1 as id {% if is_incremental() %}where ts > 0{% endif %}', "model 'm': range.* requires incremental_where_cond() (service style); is_incremental() is not compatible with range.*"],
    [`${inc}range: {advance: 1d}`, 'select 1 as id', "model 'm': range.* requires incremental_where_cond() (service style); is_incremental() is not compatible with range.*"],
  ];
  for (const [fm, sql, message] of cases) await loadError({ 'm.sql': `/**\n${fm}\n**/\n${sql}` }, message);
  const ok = duckProject({ 'm.sql': `/**\n${inc}range: {start: '2024-01-01', advance: 1mo, lookback: 2d}\n**/\n${svc}` });
  const r = await build('compile', ok, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'm').sql, 'select 1 as id, now() as ts where 1=1');
});

test('incremental style mixing and legacy tokens', async () => {
  await loadError(
    { 'm.sql': 'select 1 where {{ incremental_where_cond() }} {% if is_incremental() %}and 1=1{% endif %}' },
    "model 'm': cannot mix is_incremental() and incremental_where_cond() in the same model. Choose one pattern: either dbt-compatible (is_incremental() + {{ this }}) or service-native ({{ incremental_where_cond() }})",
  );
  for (const legacy of ['{incremental_where_cond}', '{incremental_value}']) {
    await loadError(
      { 'm.sql': `select 1 where ts > ${legacy}` },
      "model 'm': use {{ incremental_where_cond() }} or {{ incremental_value() }} instead of {incremental_where_cond} / {incremental_value}",
    );
  }
  // Default incremental context at compile: is_incremental() false, value null.
  const dir = duckProject({
    'svc.sql': 'select {{ incremental_value() }} as v where {{ incremental_where_cond() }}',
    'dbt.sql': 'select 1 as v{% if is_incremental() %} where x > (select max(x) from {{ this }}){% endif %}',
  });
  const r = await build('compile', dir, '--json');
  assert.equal(compiledNode(r, 'svc').sql, 'select null as v where 1=1');
  assert.equal(compiledNode(r, 'dbt').sql, 'select 1 as v');
});

test('every test-definition error, with the 1-based index', async () => {
  const cases: [string, string][] = [
    ["'not_null'", 'test entry must be a mapping, got string'],
    ['{not_null: []}', 'not_null requires one or more columns'],
    ["{unique: ''}", 'unique requires one or more columns'],
    ['{accepted_values: status}', 'accepted_values must be a mapping with column and values'],
    ['{accepted_values: {column: status}}', 'accepted_values requires column and values'],
    ["{expr: '  '}", 'expr test requires a non-empty expression'],
    ['{relationships: {column: c, to: p}}', 'relationships requires column, to and field'],
    ['{not_null: id, severity: fatal}', "severity must be one of: error, warn; got 'fatal'"],
    ['{foo: x, bar: y, severity: warn}', 'unknown test type in [foo, bar]; expected not_null, unique, accepted_values, expr, or relationships'],
    // Two kinds in one entry: neither is dropped silently.
    ['{unique: id, not_null: []}', 'one test per entry, got not_null and unique; write each as its own list item'],
  ];
  for (const [entry, message] of cases) {
    await loadError({ 'm.sql': `/**\ntests:\n  - unique: id\n  - ${entry}\n**/\nselect 1 as id` }, `model 'm' test 2: ${message}`);
  }
});

test('relationships.to resolves like ref(): unknown is a compile error with suggestions; known adds an edge', async () => {
  const dir = duckProject({
    'customers.sql': 'select 1 as id',
    'orders.sql': '/**\ntests:\n  - not_null: id\n  - relationships: {column: customer_id, to: customer, field: id}\n**/\nselect 1 as customer_id',
  });
  const r = await build('compile', dir);
  assert.equal(r.code, 1);
  assert.equal(
    fatal(r),
    "could not compile build project: could not compile models: model 'orders' test 2: relationships.to: ref('customer') not found. Did you mean:\n  customers            customers.sql",
  );
  const ok = duckProject({
    'b_parent.sql': 'select 1 as id',
    'a_child.sql': "/**\ntests:\n  - relationships: {column: pid, to: B_PARENT, field: id}\n    severity: warn\n  - accepted_values: {column: s, values: [x, 'y']}\n  - expr: sum(pid) >= 0\n**/\nselect 1 as pid, 'x' as s",
  });
  const c = await build('compile', ok, '--json');
  assert.equal(c.code, 0, c.err);
  assert.deepEqual((json(c) as { order: string[] }).order, ['b_parent', 'a_child']);
  const child = compiledNode(c, 'a_child');
  assert.deepEqual(child.dependencies, ['b_parent']);
  // compile shows tests as written.
  assert.deepEqual(child.tests, [
    { relationships: { column: 'pid', to: 'B_PARENT', field: 'id' }, severity: 'warn' },
    { accepted_values: { column: 's', values: ['x', 'y'] } },
    { expr: 'sum(pid) >= 0' },
  ]);
});

test('A20 multi-statement model: pre_statements, the query, post_statements (JSON and text)', async () => {
  const dir = duckProject({
    'audit.sql': "create table if not exists public.audit_log (model varchar, at timestamp);\nselect 42 as answer;\ninsert into public.audit_log values ('audit', now());\n",
    'plain.sql': "select ';' as semi -- no split here; really\n",
  });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  const audit = compiledNode(r, 'audit');
  assert.deepEqual(Object.keys(audit), ['name', 'type', 'table', 'file', 'mode', 'tags', 'dependencies', 'tests', 'pre_statements', 'sql', 'post_statements']);
  assert.deepEqual(audit.pre_statements, ['create table if not exists public.audit_log (model varchar, at timestamp)']);
  assert.equal(audit.sql, 'select 42 as answer');
  assert.deepEqual(audit.post_statements, ["insert into public.audit_log values ('audit', now())"]);
  assert.equal(compiledNode(r, 'plain').sql, "select ';' as semi -- no split here; really");
  assert.ok(!('pre_statements' in compiledNode(r, 'plain')));
  const text = await build('compile', dir, '-s', 'audit');
  assert.ok(
    text.out.includes(
      '  pre_statements:\n    - |\n        create table if not exists public.audit_log (model varchar, at timestamp)\n  sql: |\n    select 42 as answer\n  post_statements:\n    - |\n        insert into public.audit_log values (\'audit\', now())\n',
    ),
    text.out,
  );
  assert.equal(warehouseCreated(dir), false);
});

test('multi-statement errors, chained under the model', async () => {
  const prefix = "could not compile build project: could not compile models: model 'two': could not parse multi-statement models: ";
  const cases: [string, string][] = [
    ['select 1; select 2;', 'found 2 SELECT queries in model file; expected exactly 1'],
    [';\n-- nothing\n;', 'no SQL statements found'],
    ['', 'no SQL statements found'],
    ['-- only a comment\n/* and another */', 'no SQL statements found'],
    ["{% if false %}select 1{% endif %}", 'no SQL statements found'],
    ['create table x (a int);', 'model file contains a single DDL statement (CREATE), expected a SELECT query'],
    ['insert into x values (1);', 'model file contains a single DML statement (INSERT), expected a SELECT query'],
    ['insert into x values (1); delete from x;', 'no SELECT query found in model file; found 2 statements but none are queries'],
  ];
  for (const [sql, message] of cases) {
    const dir = duckProject({ 'audit.sql': 'select 42 as answer', 'two.sql': sql });
    const r = await build('compile', dir);
    assert.equal(r.code, 1, sql);
    assert.equal(fatal(r), prefix + message);
  }
});
