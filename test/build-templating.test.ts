// Templating through compile (templating, A4, A21): globals (var,
// env_var, target, vars, --vars), ref()/src()/this and their errors,
// folder-scoped macros, `@name`, and FROM/JOIN reference rewriting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, tempDir, compiledNode, duckProject, fatal, json, logLines, withEnv } from './helpers/build-cli.js';

const HELLO = `select '{{ var("region", "eu") }}' as region, '{{ env_var("TEAM", "core") }}' as team,
       '{{ target.name }}/{{ target.type }}/{{ target.schema }}' as tgt, {{ limit_n }} as n
`;
const RENDER = "could not compile build project: could not compile models: could not compile template for model ";

const sqlOf = async (dir: string, name: string, ...extra: string[]) => {
  const r = await build('compile', dir, '--json', ...extra);
  assert.equal(r.code, 0, r.err);
  return compiledNode(r, name).sql;
};

test('A21 var/env_var defaults, target object, top-level vars, --vars and --schema', async () => {
  const dir = duckProject({ 'hello.sql': HELLO }, 'target: DUCK\nvars: {limit_n: 5}\n');
  await withEnv({ TEAM: undefined }, async () => {
    assert.equal(await sqlOf(dir, 'hello', '--vars', '{"region":"us"}'), "select 'us' as region, 'core' as team,\n       'DUCK/duckdb/public' as tgt, 5 as n");
    assert.equal(await sqlOf(dir, 'hello'), "select 'eu' as region, 'core' as team,\n       'DUCK/duckdb/public' as tgt, 5 as n");
    assert.equal(await sqlOf(dir, 'hello', '--schema', 'dev_x'), "select 'eu' as region, 'core' as team,\n       'DUCK/duckdb/dev_x' as tgt, 5 as n");
    // --vars replaces top-level keys, seen both as variables and through var(); YAML flow mappings are accepted.
    assert.equal(await sqlOf(dir, 'hello', '--vars', '{limit_n: 9, region: ap}'), "select 'ap' as region, 'core' as team,\n       'DUCK/duckdb/public' as tgt, 9 as n");
  });
  await withEnv({ TEAM: 'data' }, async () => {
    assert.match(await sqlOf(dir, 'hello') as string, /'data' as team/);
  });
  await withEnv({ TEAM: '' }, async () => {
    assert.match(await sqlOf(dir, 'hello') as string, /'core' as team/);
  });
});

test('A21 var("nope") and the other global errors', async () => {
  const cases: [string, string][] = [
    ["select '{{ var(\"nope\") }}'", "var('nope') is not defined and no default was given"],
    ['select {{ var() }}', 'var() requires a variable name argument'],
    ["select '{{ env_var(\"SVC_T_NOT_SET\") }}'", "env_var('SVC_T_NOT_SET') is not set and no default was given"],
    ['select {{ env_var() }}', 'env_var() requires a variable name argument'],
    ['select * from {{ ref() }}', 'ref() requires a model name argument'],
    ['select * from {{ src() }}', 'src()/source() requires a table name argument'],
    ['select * from {{ source() }}', 'src()/source() requires a table name argument'],
  ];
  await withEnv({ SVC_T_NOT_SET: undefined }, async () => {
    for (const [body, message] of cases) {
      const dir = duckProject({ 'hello.sql': body });
      const r = await build('compile', dir, '--json');
      assert.equal(r.code, 1, body);
      assert.equal(r.out, '');
      assert.equal(fatal(r), `${RENDER}'hello': ${message}`);
    }
  });
});

test('target without a known connection: warning, type ""; env_var reads the home env file', async () => {
  const dir = duckProject({ 'm.sql': "select '{{ target.name }}/{{ target.type }}/{{ target.schema }}' as t" });
  const r = await build('compile', dir, '--json', '--target', 'NOWHERE');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'm').sql, "select 'NOWHERE//public' as t");
  assert.deepEqual(logLines(r.err), ["WRN target connection 'NOWHERE' not found locally; statement splitting will use the generic dialect"]);

  const home = tempDir('svc-home-');
  writeFileSync(join(home, 'env.yaml'), 'env:\n  SVC_T_HOME_TEAM: from_home\n');
  const env = duckProject({ 'm.sql': "select '{{ env_var(\"SVC_T_HOME_TEAM\") }}' as t" });
  await withEnv({ SERVICE_HOME_DIR: home, SVC_T_HOME_TEAM: undefined }, async () => {
    assert.equal(await sqlOf(env, 'm'), "select 'from_home' as t");
  });
  await withEnv({ SERVICE_HOME_DIR: home, SVC_T_HOME_TEAM: 'shell' }, async () => {
    assert.equal(await sqlOf(env, 'm'), "select 'shell' as t");
  });
});

test('ref(): name or prod name, case-insensitive; unknown with "Did you mean" (≤5, sorted)', async () => {
  const dir = duckProject({
    'staging/stg_orders.sql': 'select 1 as id',
    'use.sql': "select * from {{ ref('stg_orders') }} a join {{ ref('STAGING.Stg_Orders') }} b using (id)",
  });
  const c = await build('compile', dir, '--json');
  assert.equal(compiledNode(c, 'use').sql, 'select * from staging.stg_orders a join staging.stg_orders b using (id)');
  assert.deepEqual(compiledNode(c, 'use').dependencies, ['stg_orders']);

  const typo = duckProject({ 'staging/stg_orders.sql': 'select 1', 'use.sql': "select * from {{ ref('stg_order') }}" });
  assert.equal(fatal(await build('compile', typo)), `${RENDER}'use': ref('stg_order') not found. Did you mean:\n  stg_orders           staging/stg_orders.sql`);

  const many = duckProject({
    ...Object.fromEntries(['f', 'e', 'd', 'c', 'b', 'a'].map((p) => [`x/${p}_orders.sql`, 'select 1'])),
    'order.sql': 'select 1',
    'use.sql': "select * from {{ ref('orders') }}",
  });
  const lines = ['a', 'b', 'c', 'd', 'e'].map((p) => `  ${`${p}_orders`.padEnd(20)} x/${p}_orders.sql`);
  assert.equal(fatal(await build('compile', many)), `${RENDER}'use': ref('orders') not found. Did you mean:\n${lines.join('\n')}`);

  const none = duckProject({ 'a.sql': 'select 1', 'use.sql': "select * from {{ ref('zzzzzz') }}" });
  assert.equal(fatal(await build('compile', none)), `${RENDER}'use': ref('zzzzzz') not found.`);
});

test('src()/source() return the name verbatim without an edge; this is the own current name', async () => {
  const dir = duckProject({
    'a.sql': "select * from {{ src('raw.orders') }} join {{ source('raw', 'customers') }} using (id) where '{{ this }}' <> ''",
  }, 'target: DUCK\ndev: {schema: dev_q}\n');
  const r = await build('compile', dir, '--json');
  assert.equal(compiledNode(r, 'a').sql, "select * from raw.orders join raw.customers using (id) where 'dev_q.a' <> ''");
  assert.deepEqual(compiledNode(r, 'a').dependencies, []);
  assert.equal(await sqlOf(dir, 'a', '--prod'), "select * from raw.orders join raw.customers using (id) where 'public.a' <> ''");
});

test('macros are scoped by folder; root macros apply everywhere; marts/ does not reach marts_v2/', async () => {
  const dir = duckProject({
    'helpers.macros.sql': "{% macro cents(c) %}({{ c }} * 100){% endmacro %}",
    'marts/m.macros.sql': "{% macro marts_only() %}'marts'{% endmacro %}",
    'marts/a.sql': 'select {{ cents(1) }} as c, {{ marts_only() }} as m',
    'marts/deep/b.sql': 'select {{ marts_only() }} as m',
    'marts_v2/c.sql': 'select {{ cents(2) }} as c',
    'top.sql': 'select {{ cents(3) }} as c',
  });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'a').sql, "select (1 * 100) as c, 'marts' as m");
  assert.equal(compiledNode(r, 'b').sql, "select 'marts' as m");
  assert.equal(compiledNode(r, 'c').sql, 'select (2 * 100) as c');
  assert.equal(compiledNode(r, 'top').sql, 'select (3 * 100) as c');
  assert.equal(r.err, '');

  const out = duckProject({
    'marts/m.macros.sql': "{% macro marts_only() %}'marts'{% endmacro %}",
    'marts_v2/c.sql': 'select {{ marts_only() }} as m',
  });
  const f = await build('compile', out);
  assert.equal(f.code, 1);
  assert.ok(fatal(f).startsWith(`${RENDER}'c': `), f.err);
});

test('shadowing: warning naming both files; the inner definition wins in its scope only', async () => {
  const dir = duckProject({
    'helpers.macros.sql': "{% macro label() %}'root'{% endmacro %}",
    'marts/fmt.macros.sql': "{% macro label() %}'marts'{% endmacro %}",
    'marts/a.sql': 'select {{ label() }} as l',
    'b.sql': 'select {{ label() }} as l',
  });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(compiledNode(r, 'a').sql, "select 'marts' as l");
  assert.equal(compiledNode(r, 'b').sql, "select 'root' as l");
  assert.deepEqual(logLines(r.err), ['WRN macro \'label\' in marts/fmt.macros.sql shadows definition in helpers.macros.sql']);
});

test('@name: node names and prod names become current names with an edge; other @ forms stay', async () => {
  const dir = duckProject({
    'staging/stg_orders.sql': 'select 1 as id',
    'raw.csv': 'id\n1\n',
    'use.sql': [
      'select *, \'@stg_orders\' as s, x@stg_orders as y, @@version as v, @nope as n -- @raw',
      'from @staging.stg_orders join @RAW using (id) where @use is null',
    ].join('\n'),
  }, 'target: DUCK\ndev: {schema: dev_ann}\n');
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  const use = compiledNode(r, 'use');
  assert.equal(use.sql, [
    'select *, \'@stg_orders\' as s, x@stg_orders as y, @@version as v, @nope as n -- @raw',
    'from dev_ann.stg_orders join dev_ann.raw using (id) where @use is null',
  ].join('\n'));
  assert.deepEqual(use.dependencies, ['raw', 'stg_orders']);
});

const SHOP = {
  'raw_orders.csv': 'id,customer_id,amount,status,updated_at\n1,10,100,placed,2024-01-05\n',
  'staging/stg_orders.sql': "/**\nmode: view\ntags: [staging]\n**/\nselect id, customer_id, amount, status, updated_at from {{ ref('raw_orders') }}\n",
  'marts/fct_orders.sql': '-- {mode: full-refresh, tests: [{not_null: [customer_id]}, {unique: customer_id}]}\nselect customer_id, sum(amount) as total from staging.stg_orders group by 1\n',
};

test('A4 compile in dev mode rewrites the prod name staging.stg_orders to dev_ann.stg_orders', async () => {
  const dir = duckProject(SHOP, 'target: DUCK\ndev: {schema: dev_${DEV_USER}}\n');
  await withEnv({ DEV_USER: 'ann' }, async () => {
    const r = await build('compile', dir, '--json');
    assert.equal(r.code, 0, r.err);
    assert.equal(compiledNode(r, 'fct_orders').sql, 'select customer_id, sum(amount) as total from dev_ann.stg_orders group by 1');
    assert.equal(compiledNode(r, 'stg_orders').sql, 'select id, customer_id, amount, status, updated_at from dev_ann.raw_orders');
    const list = await build('list', dir, '--json');
    assert.deepEqual((json(list) as { table: string }[]).map((e) => e.table), ['dev_ann.raw_orders', 'dev_ann.stg_orders', 'dev_ann.fct_orders']);
  });
});

test('rewriting: bare names, prod names, quoted refs, join kinds; strings, comments, CTEs and self untouched', async () => {
  const dir = duckProject({
    'staging/stg_orders.sql': 'select 1 as id',
    'staging/stg_customers.sql': 'select 1 as id',
    'm.sql': [
      'with recent as (select * from stg_orders), stg_customers as (select 1 as id)',
      "select 'from stg_orders' as s /* from stg_orders */",
      'from recent',
      'left outer join "staging"."stg_orders" o using (id)',
      'natural join STG_ORDERS',
      'cross join stg_customers',
      'join external.table_x using (id)',
      'join m using (id)',
      '-- join stg_customers',
    ].join('\n'),
  }, 'target: DUCK\ndev: {schema: dev_ann}\n');
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  const m = compiledNode(r, 'm');
  assert.equal(m.sql, [
    'with recent as (select * from dev_ann.stg_orders), stg_customers as (select 1 as id)',
    "select 'from stg_orders' as s /* from stg_orders */",
    'from recent',
    'left outer join "dev_ann"."stg_orders" o using (id)',
    'natural join dev_ann.stg_orders',
    'cross join stg_customers',
    'join external.table_x using (id)',
    'join m using (id)',
    '-- join stg_customers',
  ].join('\n'));
  assert.deepEqual(m.dependencies, ['stg_orders']);
});

test('rewrite: false keeps the SQL as written; only references equal to a current full name add edges', async () => {
  const files = {
    'staging/stg_orders.sql': 'select 1 as id',
    'raw.csv': 'id\n1\n',
    'm.sql': '-- {rewrite: false}\nselect * from staging.stg_orders join dev_ann.raw using (id)',
  };
  const dir = duckProject(files, 'target: DUCK\ndev: {schema: dev_ann}\n');
  const r = await build('compile', dir, '--json');
  assert.equal(compiledNode(r, 'm').sql, 'select * from staging.stg_orders join dev_ann.raw using (id)');
  assert.deepEqual(compiledNode(r, 'm').dependencies, ['raw']);
  const prod = await build('compile', dir, '--json', '--prod');
  assert.deepEqual(compiledNode(prod, 'm').dependencies, ['stg_orders']);
  const cfg = duckProject({ ...files, 'm.sql': "{{ config(rewrite=false) }}select * from stg_orders" });
  const c = await build('compile', cfg, '--json');
  assert.equal(compiledNode(c, 'm').sql, 'select * from stg_orders');
  assert.deepEqual(compiledNode(c, 'm').dependencies, []);
});

test('Jinja parse errors are "could not parse template"; undefined plain variables render empty', async () => {
  const bad = duckProject({ 'm.sql': 'select {% if x %}1' });
  const r = await build('compile', bad);
  assert.equal(r.code, 1);
  assert.match(fatal(r), /^could not compile build project: could not compile models: could not parse template for model 'm': \S/);
  const undef = duckProject({ 'm.sql': "select '{{ not_defined_anywhere }}' as x" });
  assert.equal(await sqlOf(undef, 'm'), "select '' as x");
});
