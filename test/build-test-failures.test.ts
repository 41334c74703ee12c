/**
 * Bad data is told apart from bad SQL: a model that was written and whose
 * data test failed gets a line saying so (the contract's FAIL lines and
 * error texts stay), and a severity written inside a test's own mapping
 * takes effect — or is refused naming the key — instead of being ignored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cli } from './helpers/build-cli.js';
import { duckWarehouse } from './helpers/warehouse.js';

const ORDERS = [
  '/**',
  'tests:',
  '  - unique: order_id',
  '  - not_null: order_id',
  '**/',
  'select 1 as order_id union all select 1 union all select 2 union all select 2 union all select 3 union all select 3',
  '',
].join('\n');

const strip = (err: string) => err.split('\n').map((l) => l.replace(/^\S+ /, ''));

test('a built model whose first data test fails: a line names the test and its rows and says the model was built', async () => {
  const duck = duckWarehouse();
  const dir = duck.project({ 'orders.sql': ORDERS, 'child.sql': "select * from {{ ref('orders') }}\n", 'bad.sql': 'select * from missing_table\n' });
  const r = await cli('build', 'run', dir);
  assert.equal(r.code, 1);
  const lines = strip(r.err);
  const fail = lines.findIndex((l) => /^ERR \[\d\/3\] public\.orders \(full-refresh\) \.+ FAIL \(/.test(l));
  assert.ok(fail >= 0, r.err);
  assert.equal(lines[fail + 1], 'ERR   model public.orders built [6 rows]; data test unique(order_id) failed: 3 violating rows; 1 remaining test not run; dependents skipped');
  assert.ok(lines.some((l) => /^INF \[\d\/3\] public\.child \(full-refresh\) \.+ SKIP$/.test(l)), r.err);
  // The model whose SQL failed has no such line: bad SQL is not bad data.
  assert.ok(!lines.some((l) => l.includes('model public.bad built')), r.err);
  // The contract's texts stay.
  assert.match(r.out, /model 'orders' test "unique\(order_id\)" failed: 3 violating row\(s\)/);
  const json = await cli('build', 'run', dir, '--json', '-s', 'orders');
  const rec = JSON.parse(json.out).results.find((x: { name: string }) => x.name === 'public.orders');
  assert.equal(rec.status, 'error');
  assert.equal(rec.error, `model 'orders' test "unique(order_id)" failed: 3 violating row(s)`);
});

test('severity: warn inside the test mapping, or under config:, makes the test a warning', async () => {
  const duck = duckWarehouse();
  const model = (tests: string[]) => ['/**', 'tests:', ...tests, '**/', "select 1 as id, 'open' as status union all select 1, 'lost'", ''].join('\n');
  const dir = duck.project({
    'a.sql': model(['  - unique: {column: id, severity: warn}']),
    'b.sql': model(['  - accepted_values: {column: status, values: [open], severity: warn}']),
    'c.sql': model(['  - unique: id', '    config: {severity: warn}']),
    'd.sql': model(['  - not_null: {columns: [id, status], config: {severity: warn}}', '  - unique: {columns: [id], config: {severity: warn}}']),
  });
  const r = await cli('build', 'run', dir, '--json');
  assert.equal(r.code, 0, r.err + r.out);
  const out = JSON.parse(r.out);
  assert.deepEqual(
    out.tests.map((t: { node: string; test: string; status: string; severity: string }) => [t.node, t.test, t.status, t.severity]),
    [
      ['public.a', 'unique(id)', 'warn', 'warn'],
      ['public.b', 'accepted_values(status)', 'warn', 'warn'],
      ['public.c', 'unique(id)', 'warn', 'warn'],
      ['public.d', 'not_null(id, status)', 'pass', 'warn'],
      ['public.d', 'unique(id)', 'warn', 'warn'],
    ],
  );
});

test('a key a test does not take is refused, naming it; so are two severities that disagree', async () => {
  const duck = duckWarehouse();
  const cases: [string[], string][] = [
    [['  - unique: {column: id, severty: warn}'], "model 'm' test 1: unknown key unique.severty; expected column, columns, severity, config"],
    [['  - unique: id', '    severty: warn'], "model 'm' test 1: unknown key severty beside unique; expected severity or config"],
    [['  - unique: id', '    config: {severity: warn, tags: [x]}'], "model 'm' test 1: unknown key config.tags; a test's config holds only severity"],
    [['  - accepted_values: {column: id, values: [1], severity: loud}'], "model 'm' test 1: severity must be one of: error, warn; got 'loud' (accepted_values.severity)"],
    [['  - relationships: {column: id, to: x, field: id, severity: warn}', '    severity: error'], "model 'm' test 1: relationships's own severity 'warn' and the entry's severity 'error' disagree"],
    [['  - unique: id', '    not_null: id'], "model 'm' test 1: one test per entry, got not_null and unique; write each as its own list item"],
  ];
  for (const [tests, message] of cases) {
    const dir = duck.project({ 'm.sql': ['/**', 'tests:', ...tests, '**/', 'select 1 as id', ''].join('\n') });
    const r = await cli('build', 'compile', dir);
    assert.equal(r.code, 1, tests.join('\n'));
    assert.ok(r.err.includes(message), `${message}\nin:\n${r.err}`);
  }
});
