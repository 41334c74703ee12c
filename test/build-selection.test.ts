// Selection and DAG order through `service build list --json` (the DAG,
// selection, A14, A15, A20): every row of the selector examples table on a real project,
// each selector form on a 10-node project, and the selector/cycle errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, duckProject, fatal, listNames, warehouseCreated } from './helpers/build-cli.js';

/** The project of the selector examples. */
const SHOP = {
  'raw_orders.csv': 'id,customer_id,amount,updated_at\n1,10,100,2024-01-05\n',
  'raw_customers.csv': 'id,name\n10,ann\n',
  'staging/stg_orders.sql': "/**\nmode: view\ntags: [staging]\n**/\nselect * from {{ ref('raw_orders') }}",
  'staging/stg_customers.sql': "-- {mode: view, tags: [staging]}\nselect * from raw_customers",
  'marts/fct_orders.sql': "/**\nmode: incremental\nunique_key: id\nupdate_key: updated_at\ntags: [daily]\n**/\nselect o.* from @stg_orders o join staging.stg_customers c on c.id = o.customer_id where {{ incremental_where_cond() }}",
  'marts/dim_customers.sql': "-- {mode: full-refresh}\nselect * from {{ ref('stg_customers') }}",
  'marts/rpt_revenue.sql': 'select sum(amount) as revenue from fct_orders',
};

const SP = 'could not compile build project: could not apply selectors: ';

test('A14 every row of the selector examples table through list --json', async () => {
  const dir = duckProject(SHOP);
  const rows: [string[], string[]][] = [
    [[], ['raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'dim_customers', 'fct_orders', 'rpt_revenue']],
    [['-s', 'stg_*, dim_customers'], ['stg_customers', 'stg_orders', 'dim_customers']],
    [['-s', 'raw_orders', '-s', 'dim_customers'], ['raw_orders', 'dim_customers']],
    [['-s', '+fct_orders'], ['raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'fct_orders']],
    [['-s', 'stg_orders+'], ['stg_orders', 'fct_orders', 'rpt_revenue']],
    [['-s', 'stg_orders+1'], ['stg_orders', 'fct_orders']],
    [['-s', '1+fct_orders'], ['stg_customers', 'stg_orders', 'fct_orders']],
    [['-s', '@stg_orders'], ['raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'fct_orders', 'rpt_revenue']],
    [['-s', 'stg_orders-rpt_revenue'], ['stg_orders', 'fct_orders', 'rpt_revenue']],
    [['-s', 'staging/*'], ['stg_customers', 'stg_orders']],
    [['-s', 'staging/{stg_orders,stg_customers}.sql'], ['stg_customers', 'stg_orders']],
    [['-s', 'path:marts'], ['dim_customers', 'fct_orders', 'rpt_revenue']],
    [['-s', 'tag:daily'], ['fct_orders']],
    [['-s', 'tag:staging+'], ['stg_customers', 'stg_orders', 'dim_customers', 'fct_orders', 'rpt_revenue']],
    [['-s', 'config.mode:view'], ['stg_customers', 'stg_orders']],
    [['-s', 'config.materialized:table'], ['dim_customers', 'rpt_revenue']],
    [['-s', 'marts.*'], ['dim_customers', 'fct_orders', 'rpt_revenue']],
    [['-s', 'MARTS.FCT_ORDERS'], ['fct_orders']],
    [['-s', '+rpt_revenue', '--exclude', 'tag:staging'], ['raw_customers', 'raw_orders', 'fct_orders', 'rpt_revenue']],
    [['-s', 'tag:nothing'], []],
  ];
  for (const [args, want] of rows) {
    const r = await build('list', '--json', dir, ...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    assert.equal(r.err, '', args.join(' '));
    assert.deepEqual(listNames(r), want, args.join(' '));
  }
  assert.equal((await build('list', dir, '--json', '-s', 'tag:nothing')).out, '[]\n');
  assert.equal(warehouseCreated(dir), false);
});

test('A14 selector errors: invalid pattern, unknown base inside an operator, unknown exact name', async () => {
  const dir = duckProject(SHOP);
  const cases: [string, string][] = [
    ['a+b', "selector 'a+b': invalid selector pattern"],
    ['@stg_orders+', "selector '@stg_orders+': invalid selector pattern"],
    ['nope+', "selector 'nope+': model 'nope' not found"],
    ['2+nope', "selector '2+nope': model 'nope' not found"],
    ['@nope', "selector '@nope': model 'nope' not found"],
    ['zzzzzz', "selector 'zzzzzz' not found."],
  ];
  for (const [sel, message] of cases) {
    const r = await build('list', dir, '--json', '-s', sel);
    assert.equal(r.code, 1, sel);
    assert.equal(r.out, '');
    assert.equal(fatal(r), SP + message);
  }
  // Excludes use the same grammar and the same errors.
  assert.equal(fatal(await build('list', dir, '--exclude', 'nope+')), `${SP}selector 'nope+': model 'nope' not found`);
});

test('A15 unknown selector with a suggestion line', async () => {
  const dir = duckProject(SHOP);
  const r = await build('list', dir, '-s', 'stg_order');
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.ok(r.err.includes("selector 'stg_order' not found. Did you mean:\n  stg_orders           staging/stg_orders.sql\n"), r.err);
  assert.equal(fatal(r), `${SP}selector 'stg_order' not found. Did you mean:\n  stg_orders           staging/stg_orders.sql`);
});

test('A20 a cycle is a compile error naming the cycle from its smallest name; several cycles sorted', async () => {
  const cyc = duckProject({ 'a.sql': "select * from {{ ref('b') }}", 'b.sql': "select * from {{ ref('a') }}" });
  for (const command of ['compile', 'list']) {
    const r = await build(command, cyc);
    assert.equal(r.code, 1, command);
    assert.equal(r.out, '');
    assert.equal(r.err, 'fatal: could not compile build project: could not build dependency graph: cycle detected in model dependencies: a -> b -> a\n');
  }
  const two = duckProject({
    'd.sql': 'select * from c', 'c.sql': 'select * from d',
    'b.sql': "select * from {{ ref('a') }}", 'a.sql': 'select * from @b', 'ok.sql': 'select 1',
  });
  assert.equal(fatal(await build('compile', two)), 'could not compile build project: could not build dependency graph: cycle detected in model dependencies: a -> b -> a; c -> d -> c');
});

/** Ten nodes: 2 seeds, staging, an intermediate, deep marts folders, a hyphenated name and a loner. */
const TEN = {
  'src_a.csv': 'id\n1\n',
  'src_b.csv': 'id\n1\n',
  'staging/stg_a.sql': "-- {tags: [staging, nightly], mode: view}\nselect * from {{ ref('src_a') }}",
  'staging/stg_b.sql': '-- {tags: [staging], mode: view}\nselect * from src_b',
  'int/int_ab.sql': 'select * from stg_a join stg_b using (id)',
  'marts/core/fct_x.sql': "/**\nmode: incremental\nunique_key: [id, day]\nupdate_key: ts\ntags: [daily]\n**/\nselect * from {{ ref('int_ab') }}",
  'marts/core/dim_y.sql': "{{ config(materialized='view', tags=['dims']) }}select * from @stg_b",
  'marts/rpt_z.sql': 'select * from marts.fct_x',
  'my-thing.sql': 'select * from int.int_ab',
  'lonely.sql': '-- {drop_cascade: true}\nselect 1',
  'gone.sql': '-- {enabled: false}\nselect 1',
};
const ORDER = ['lonely', 'src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'my-thing', 'rpt_z'];

test('each selector form on a 10-node project', async () => {
  const dir = duckProject(TEN);
  const names = async (...args: string[]) => {
    const r = await build('list', dir, '--json', ...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    return listNames(r);
  };
  assert.deepEqual(await names(), ORDER);
  const cases: [string[], string[]][] = [
    [['-s', 'INT_AB'], ['int_ab']],
    [['-s', 'int.int_ab'], ['int_ab']],
    [['-s', 'my-thing'], ['my-thing']],
    [['-s', 'stg_a-rpt_z'], ['stg_a', 'int_ab', 'fct_x', 'rpt_z']],
    [['-s', 'int_ab+0'], ['int_ab']],
    [['-s', '+int_ab+1'], ['src_a', 'src_b', 'stg_a', 'stg_b', 'int_ab', 'fct_x', 'my-thing']],
    [['-s', '1+fct_x+'], ['int_ab', 'fct_x', 'rpt_z']],
    [['-s', '@stg_b'], ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'my-thing', 'rpt_z']],
    [['-s', 'tag:nightly'], ['stg_a']],
    [['-s', 'tag:dims'], ['dim_y']],
    [['-s', '+tag:daily'], ['src_a', 'src_b', 'stg_a', 'stg_b', 'int_ab', 'fct_x']],
    [['-s', 'path:./marts/'], ['dim_y', 'fct_x', 'rpt_z']],
    [['-s', 'path:marts/core/fct_x.sql'], ['fct_x']],
    [['-s', 'path:marts/*/d*'], ['dim_y']],
    [['-s', 'marts/*'], ['dim_y', 'fct_x', 'rpt_z']],
    [['-s', 'path:*.csv'], ['src_a', 'src_b']],
    [['-s', '*.csv'], []], // no slash: a name glob, and names have no extension
    [['-s', 'stg_?'], ['stg_a', 'stg_b']],
    [['-s', 'src_[a]'], ['src_a']],
    [['-s', '{lonely,rpt_z}'], ['lonely', 'rpt_z']],
    [['-s', 'config.mode:view'], ['stg_a', 'stg_b', 'dim_y']],
    [['-s', 'config.materialized:incremental'], ['fct_x']],
    [['-s', 'config.unique_key:day'], ['fct_x']],
    [['-s', 'config.tags:night*'], ['stg_a']],
    [['-s', 'config.drop_cascade:true'], ['lonely']],
    [['-s', 'config.mode:full-refresh'], ['lonely', 'int_ab', 'my-thing', 'rpt_z']],
    [['-s', ' lonely ,, src_a ', '-s', 'src_b,'], ['lonely', 'src_a', 'src_b']],
    [['--exclude', 'staging/*,tag:daily+'], ['lonely', 'src_a', 'src_b', 'dim_y', 'int_ab', 'my-thing']],
    [['-s', 'tag:staging+', '--exclude', '@fct_x', '--exclude', 'my-thing'], ['dim_y']],
    [['-s', 'tag:nothing,path:nowhere,config.mode:append,zz*'], []],
  ];
  for (const [args, want] of cases) assert.deepEqual(await names(...args), want, args.join(' '));
  // A disabled model named exactly is an error; a glob simply does not see it.
  const off = await build('list', dir, '-s', 'gone');
  assert.equal(off.code, 1);
  assert.ok(fatal(off).startsWith(SP), off.err);
  assert.deepEqual(await names('-s', 'go*'), []);
});

test('compile honours the selection; dependencies outside it are still named', async () => {
  const dir = duckProject(TEN);
  const r = await build('compile', dir, '--json', '-s', 'fct_x+', '--exclude', 'rpt_z');
  assert.equal(r.code, 0, r.err);
  const payload = JSON.parse(r.out) as { order: string[]; nodes: { name: string; dependencies: string[] }[] };
  assert.deepEqual(payload.order, ['fct_x']);
  assert.deepEqual(payload.nodes.map((n) => [n.name, n.dependencies]), [['fct_x', ['int_ab']]]);
});
