// Selection: every row of the selector examples table, each selector
// form on a 10-node dbt-layout DAG, the A14/A15 error texts, and the
// 10,000-node timing that justifies the precomputed adjacency.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Graph, GraphNode } from '../engine/dag/graph.js';
import { topoOrder } from '../engine/dag/order.js';
import { selectNodes, splitSelectors } from '../engine/dag/select.js';
import { EngineError } from '../engine/errors.js';

interface Spec {
  readonly file: string;
  readonly discovery?: string;
  readonly deps?: readonly string[];
  readonly tags?: readonly string[];
  readonly config?: Record<string, unknown>;
}

/** A Graph in DAG order from hand-written nodes; folders give prod names. */
function fixture(specs: readonly Spec[], disabled: readonly string[] = []): Graph {
  const nodes = specs.map((s): GraphNode => {
    const discoveryPath = s.discovery ?? s.file;
    const name = discoveryPath.replace(/^.*\//, '').replace(/\.[^.]+$/, '');
    const schema = discoveryPath.includes('/') ? discoveryPath.slice(0, discoveryPath.indexOf('/')) : 'public';
    const seed = !s.file.endsWith('.sql');
    return {
      name,
      kind: seed ? 'seed' : 'model',
      prodName: `${schema}.${name}`,
      fullName: `${schema}.${name}`,
      file: s.file,
      discoveryPath,
      tags: s.tags ?? [],
      config: seed ? {} : { mode: 'full-refresh', ...s.config, tags: s.tags ?? [] },
    };
  });
  const deps = new Map(nodes.map((n, i) => [n.name.toLowerCase(), specs[i].deps ?? []]));
  const order = topoOrder(nodes.map((n) => n.name), deps);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return { nodes: order.map((n) => byName.get(n)!), deps, disabled: new Set(disabled) };
}

const shop = fixture([
  { file: 'raw_orders.csv' },
  { file: 'raw_customers.csv' },
  { file: 'staging/stg_orders.sql', deps: ['raw_orders'], tags: ['staging'], config: { mode: 'view' } },
  { file: 'staging/stg_customers.sql', deps: ['raw_customers'], tags: ['staging'], config: { mode: 'view' } },
  {
    file: 'marts/fct_orders.sql', deps: ['stg_orders', 'stg_customers'], tags: ['daily'],
    config: { mode: 'incremental', unique_key: 'id', update_key: 'updated_at' },
  },
  { file: 'marts/dim_customers.sql', deps: ['stg_customers'] },
  { file: 'marts/rpt_revenue.sql', deps: ['fct_orders'] },
]);

// dbt_project layout: files under models/ and seeds/, discovery paths below them.
const ten = fixture([
  { file: 'seeds/src_a.csv', discovery: 'src_a.csv' },
  { file: 'seeds/src_b.csv', discovery: 'src_b.csv' },
  { file: 'models/stg-c.sql', discovery: 'stg-c.sql' },
  { file: 'models/staging/stg_a.sql', discovery: 'staging/stg_a.sql', deps: ['src_a'], tags: ['staging', 'pii'], config: { mode: 'view' } },
  { file: 'models/staging/stg_b.sql', discovery: 'staging/stg_b.sql', deps: ['src_b'], tags: ['staging'], config: { mode: 'view' } },
  {
    file: 'models/int/int_ab.sql', discovery: 'int/int_ab.sql', deps: ['stg_a', 'stg_b'],
    config: { unique_key: ['id', 'ts'], drop_cascade: true },
  },
  {
    file: 'models/marts/core/fct_x.sql', discovery: 'marts/core/fct_x.sql', deps: ['int_ab'],
    config: { mode: 'incremental', unique_key: 'id', update_key: 'ts', rewrite: false },
  },
  { file: 'models/marts/core/dim_y.sql', discovery: 'marts/core/dim_y.sql', deps: ['stg_b'], config: { drop_cascade: false } },
  { file: 'models/marts/rpt_z.sql', discovery: 'marts/rpt_z.sql', deps: ['fct_x', 'dim_y'], tags: ['daily'], config: { mode: 'view' } },
  { file: 'models/marts/rpt_w.sql', discovery: 'marts/rpt_w.sql', deps: ['rpt_z'], config: { mode: 'append' } },
], ['old_model']);

const names = (graph: Graph, include: string[], exclude: string[] = []): string[] =>
  selectNodes(graph, include, exclude).map((n) => n.name);

function selectError(graph: Graph, include: string[], exclude: string[] = []): string {
  try {
    selectNodes(graph, include, exclude);
  } catch (err) {
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, 'select');
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(include)} / ${JSON.stringify(exclude)} to fail`);
}

test('fixtures are in the DAG order the docs state', () => {
  assert.deepEqual(shop.nodes.map((n) => n.name), [
    'raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'dim_customers', 'fct_orders', 'rpt_revenue',
  ]);
  assert.deepEqual(ten.nodes.map((n) => n.name), [
    'src_a', 'src_b', 'stg-c', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w',
  ]);
});

const table: ReadonlyArray<[include: string[], exclude: string[], selected: string[]]> = [
  [['stg_*, dim_customers'], [], ['stg_customers', 'stg_orders', 'dim_customers']],
  [['raw_orders', 'dim_customers'], [], ['raw_orders', 'dim_customers']],
  [['+fct_orders'], [], ['raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'fct_orders']],
  [['stg_orders+'], [], ['stg_orders', 'fct_orders', 'rpt_revenue']],
  [['stg_orders+1'], [], ['stg_orders', 'fct_orders']],
  [['1+fct_orders'], [], ['stg_customers', 'stg_orders', 'fct_orders']],
  [['@stg_orders'], [], ['raw_customers', 'raw_orders', 'stg_customers', 'stg_orders', 'fct_orders', 'rpt_revenue']],
  [['stg_orders-rpt_revenue'], [], ['stg_orders', 'fct_orders', 'rpt_revenue']],
  [['staging/*'], [], ['stg_customers', 'stg_orders']],
  [['staging/{stg_orders,stg_customers}.sql'], [], ['stg_customers', 'stg_orders']],
  [['path:marts'], [], ['dim_customers', 'fct_orders', 'rpt_revenue']],
  [['tag:daily'], [], ['fct_orders']],
  [['tag:staging+'], [], ['stg_customers', 'stg_orders', 'dim_customers', 'fct_orders', 'rpt_revenue']],
  [['config.mode:view'], [], ['stg_customers', 'stg_orders']],
  [['config.materialized:table'], [], ['dim_customers', 'rpt_revenue']],
  [['marts.*'], [], ['dim_customers', 'fct_orders', 'rpt_revenue']],
  [['MARTS.FCT_ORDERS'], [], ['fct_orders']],
  [['+rpt_revenue'], ['tag:staging'], ['raw_customers', 'raw_orders', 'fct_orders', 'rpt_revenue']],
  [['tag:nothing'], [], []],
];

for (const [include, exclude, selected] of table) {
  const args = [...include.map((s) => `-s ${s}`), ...exclude.map((s) => `--exclude ${s}`)].join(' ');
  test(`${args}`, () => assert.deepEqual(names(shop, include, exclude), selected));
}

test('A14: a + inside the base is invalid; an unknown name inside an operator is not found', () => {
  assert.equal(selectError(shop, ['a+b']), "selector 'a+b': invalid selector pattern");
  assert.equal(selectError(shop, ['nope+']), "selector 'nope+': model 'nope' not found");
});

test('A15: an unknown exact selector suggests close names with their files', () => {
  assert.equal(
    selectError(shop, ['stg_order']),
    "selector 'stg_order' not found. Did you mean:\n  stg_orders           staging/stg_orders.sql",
  );
  assert.equal(selectError(shop, ['zzz_unrelated']), "selector 'zzz_unrelated' not found.");
});

test('no include items selects everything; empty and repeated items change nothing', () => {
  const all = ten.nodes.map((n) => n.name);
  assert.deepEqual(names(ten, []), all);
  assert.deepEqual(names(ten, [' , ,']), all);
  assert.deepEqual(names(ten, ['stg_a, stg_a', 'stg_a', ' stg_a ']), ['stg_a']);
  assert.deepEqual(names(ten, [' rpt_w , ,stg_a ']), ['stg_a', 'rpt_w']);
  assert.deepEqual(names(ten, [], ['path:marts']), ['src_a', 'src_b', 'stg-c', 'stg_a', 'stg_b', 'int_ab']);
});

test('lists split on commas outside braces only', () => {
  assert.deepEqual(splitSelectors(['a,{b,c}, d ', 'x/{y,z}.sql,,']), ['a', '{b,c}', 'd', 'x/{y,z}.sql']);
  assert.deepEqual(names(ten, ['{stg_a,stg_b}, rpt_w']), ['stg_a', 'stg_b', 'rpt_w']);
  assert.deepEqual(names(ten, ['models/{stg-c,int/int_ab}.sql']), ['stg-c', 'int_ab']);
});

test('ancestor and descendant depths count generations from the nearest root', () => {
  assert.deepEqual(names(ten, ['1+rpt_z']), ['dim_y', 'fct_x', 'rpt_z']);
  assert.deepEqual(names(ten, ['3+rpt_z']), ['src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z']);
  assert.deepEqual(names(ten, ['stg_b+1']), ['stg_b', 'dim_y', 'int_ab']);
  assert.deepEqual(names(ten, ['stg_b+0']), ['stg_b']);
  assert.deepEqual(names(ten, ['0+stg_b+0']), ['stg_b']);
  assert.deepEqual(names(ten, ['+int_ab+']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['1+int_ab+1']), ['stg_a', 'stg_b', 'int_ab', 'fct_x']);
  assert.deepEqual(names(ten, ['tag:pii+']), ['stg_a', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['+path:marts/core']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x']);
  assert.deepEqual(names(ten, ['config.rewrite:false+1']), ['fct_x', 'rpt_z']);
});

test('@X adds descendants and then every ancestor of those', () => {
  assert.deepEqual(names(ten, ['@stg_b']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['@dim_y']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['@rpt_w']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['@stg-c']), ['stg-c']);
});

test('slices need node names on both sides; otherwise the item is a name', () => {
  assert.deepEqual(names(ten, ['stg_a-rpt_w']), ['stg_a', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['src_b-rpt_z']), ['src_b', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z']);
  assert.deepEqual(names(ten, ['stg_a-dim_y']), ['stg_a', 'dim_y']);
  assert.deepEqual(names(ten, ['staging.stg_a-MARTS.RPT_Z']), ['stg_a', 'int_ab', 'fct_x', 'rpt_z']);
  assert.deepEqual(names(ten, ['stg-c']), ['stg-c']);
  assert.equal(selectError(ten, ['stg_a-nope']), "selector 'stg_a-nope' not found.");
});

test('path: matches files and directories on both the build-relative and discovery path', () => {
  assert.deepEqual(names(ten, ['path:staging']), ['stg_a', 'stg_b']);
  assert.deepEqual(names(ten, ['path:./models/marts/']), ['dim_y', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['path:marts/core']), ['dim_y', 'fct_x']);
  assert.deepEqual(names(ten, ['path:marts/core/fct_x.sql']), ['fct_x']);
  assert.deepEqual(names(ten, ['path:seeds']), ['src_a', 'src_b']);
  assert.deepEqual(names(ten, ['path:mart']), []);
  assert.deepEqual(names(ten, ['path:marts/*.sql']), ['dim_y', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['path:{int,staging}/*']), ['stg_a', 'stg_b', 'int_ab']);
});

test('file globs: * crosses folders, ? and [] match one character', () => {
  assert.deepEqual(names(ten, ['marts/*/fct_*']), ['fct_x']);
  assert.deepEqual(names(ten, ['models/*']), ['stg-c', 'stg_a', 'stg_b', 'dim_y', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['./staging/stg_?.sql']), ['stg_a', 'stg_b']);
  assert.deepEqual(names(ten, ['seeds/src_[b-z].csv']), ['src_b']);
  assert.deepEqual(names(ten, ['nowhere/*']), []);
});

test('name globs match the name or the prod name, ignoring case', () => {
  assert.deepEqual(names(ten, ['rpt_?']), ['rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['[sd]*_[by]']), ['src_b', 'stg_b', 'dim_y']);
  assert.deepEqual(names(ten, ['MARTS.rpt_*']), ['rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['int.*']), ['int_ab']);
  assert.deepEqual(names(ten, ['public.*']), ['src_a', 'src_b', 'stg-c']);
  assert.deepEqual(names(ten, ['zzz*']), []);
});

test('exact names and prod names are case-insensitive', () => {
  assert.deepEqual(names(ten, ['STG_A+1']), ['stg_a', 'int_ab']);
  assert.deepEqual(names(ten, ['Staging.STG_A', 'marts.dim_y']), ['stg_a', 'dim_y']);
});

test('config.<key>:<value> compares resolved modes, list elements, booleans and globs', () => {
  assert.deepEqual(names(ten, ['config.mode:table']), ['stg-c', 'dim_y', 'int_ab']);
  assert.deepEqual(names(ten, ['config.mode:FULL-REFRESH']), ['stg-c', 'dim_y', 'int_ab']);
  assert.deepEqual(names(ten, ['config.materialized:incremental']), ['fct_x']);
  assert.deepEqual(names(ten, ['config.mode:snapshot']), ['rpt_w']);
  assert.deepEqual(names(ten, ['config.mode:*view']), ['stg_a', 'stg_b', 'rpt_z']);
  assert.deepEqual(names(ten, ['config.unique_key:ts']), ['int_ab']);
  assert.deepEqual(names(ten, ['config.unique_key:ID']), ['int_ab', 'fct_x']);
  assert.deepEqual(names(ten, ['config.unique_key:{ts,nope}']), ['int_ab']);
  assert.deepEqual(names(ten, ['config.drop_cascade:true']), ['int_ab']);
  assert.deepEqual(names(ten, ['config.drop_cascade:false']), ['dim_y']);
  assert.deepEqual(names(ten, ['config.rewrite:false']), ['fct_x']);
  assert.deepEqual(names(ten, ['config.tags:pii']), ['stg_a']);
  assert.deepEqual(names(ten, ['config.schema:anything']), []);
});

test('tag and config selectors never match seeds', () => {
  const seeded = fixture([{ file: 'seeds/s.csv' }, { file: 'm.sql', deps: ['s'] }]);
  assert.deepEqual(names(seeded, ['config.mode:full-refresh']), ['m']);
  assert.deepEqual(names(seeded, ['config.mode:*']), ['m']);
  assert.deepEqual(names(ten, ['tag:*']), []);
});

test('excludes use the full grammar, graph operators included', () => {
  assert.deepEqual(names(ten, ['+rpt_w'], ['int_ab+']), ['src_a', 'src_b', 'stg_a', 'stg_b', 'dim_y']);
  assert.deepEqual(names(ten, ['+rpt_w'], ['1+dim_y', 'path:seeds']), ['stg_a', 'int_ab', 'fct_x', 'rpt_z', 'rpt_w']);
  assert.deepEqual(names(ten, ['stg_a+'], ['@fct_x']), []);
});

test('malformed operators are invalid selector patterns', () => {
  for (const item of ['@stg_a+', '+@', '@', '+', '++', '1+', 'a++', 'stg_a+b', '2+stg_a+b+', 'config.:x']) {
    assert.equal(selectError(ten, [item]), `selector '${item}': invalid selector pattern`, item);
  }
  assert.equal(selectError(ten, ['rpt_w'], ['x+y']), "selector 'x+y': invalid selector pattern");
});

test('unknown names inside @, operators and excludes are errors', () => {
  assert.equal(selectError(ten, ['+nope']), "selector '+nope': model 'nope' not found");
  assert.equal(selectError(ten, ['2+nope+1']), "selector '2+nope+1': model 'nope' not found");
  assert.equal(selectError(ten, ['@nope']), "selector '@nope': model 'nope' not found");
  assert.equal(selectError(ten, [], ['nope']), "selector 'nope' not found.");
});

test('selecting a disabled model exactly is an error', () => {
  assert.equal(selectError(ten, ['old_model']), "selector 'old_model': model 'old_model' is disabled (enabled: false)");
  assert.equal(selectError(ten, ['OLD_MODEL+']), "selector 'OLD_MODEL+': model 'OLD_MODEL' is disabled (enabled: false)");
  assert.deepEqual(names(ten, ['old_*']), []);
});

test('suggestions list names within distance 2 or ending in _<query>, sorted by code point', () => {
  assert.equal(
    selectError(ten, ['stg']),
    "selector 'stg' not found. Did you mean:" +
      '\n  stg-c                models/stg-c.sql' +
      '\n  stg_a                models/staging/stg_a.sql' +
      '\n  stg_b                models/staging/stg_b.sql',
  );
  assert.equal(
    selectError(ten, ['AB']),
    "selector 'AB' not found. Did you mean:\n  int_ab               models/int/int_ab.sql",
  );
});

test('a 10,000-node project selects in milliseconds', () => {
  const count = 10_000;
  const specs: Spec[] = Array.from({ length: count }, (_, i) => ({
    file: `layer${i % 10}/m${i}.sql`,
    deps: i === 0 ? [] : [`m${Math.floor(i / 2)}`, `m${i - 1}`],
    tags: i % 3 === 0 ? ['third'] : [],
  }));
  const big = fixture(specs);
  const run = (): number[] => [
    selectNodes(big, ['+m9999'], []).length,
    selectNodes(big, ['@m5000'], []).length,
    selectNodes(big, ['m5000+'], []).length,
    selectNodes(big, ['m2-m9999'], []).length,
    selectNodes(big, ['layer3/*', 'tag:third+1', 'm1*'], ['config.mode:view']).length,
  ];
  const third = (i: number): boolean => i % 3 === 0;
  let mixed = 0;
  for (let i = 0; i < count; i++) {
    const childOfThird = i > 0 && (third(Math.floor(i / 2)) || third(i - 1));
    if (i % 10 === 3 || third(i) || childOfThird || String(i).startsWith('1')) mixed++;
  }
  // Speed is measured in bench/, not asserted here (no wall-clock in tests).
  assert.deepEqual(run(), [count, count, count - 5000, count - 2, mixed]);
});
