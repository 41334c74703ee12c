/**
 * Data tests are visible: a line per test with its result,
 * a `Tests: N passed, M warned, K failed` summary, and per-test records under
 * `tests` in `run --json` (additive: the payload's own fields are unchanged).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cli } from './helpers/build-cli.js';
import { duckWarehouse } from './helpers/warehouse.js';

const MODEL = [
  '/**',
  'tests:',
  '  - unique: id',
  '  - not_null: name',
  '    severity: warn',
  '  - expr: "count(*) = 3"',
  '**/',
  "select 1 as id, 'a' as name union all select 2, null union all select 3, 'c'",
  '',
].join('\n');

test('every data test gets a line and a record; the summary counts them', async () => {
  const duck = duckWarehouse();
  const dir = duck.project({ 'people.sql': MODEL, 'broken.sql': "/**\ntests:\n  - unique: id\n**/\nselect 1 as id union all select 1\n" });
  const text = await cli('build', 'run', dir);
  assert.equal(text.code, 1);
  const lines = text.err.split('\n').map((l) => l.replace(/^\S+ /, ''));
  for (const want of [
    /^INF test unique\(id\) on public\.people \.+ PASS$/,
    /^WRN test not_null\(name\) on public\.people \.+ WARN \(1 violating row\)$/,
    /^INF test expr\(count\(\*\) = 3\) on public\.people \.+ PASS$/,
    /^ERR test unique\(id\) on public\.broken \.+ FAIL \(1 violating row\)$/,
    /^INF Tests: 2 passed, 1 warned, 1 failed$/,
  ]) {
    assert.ok(lines.some((l) => want.test(l)), `${want} in:\n${text.err}`);
  }
  // The summary comes before the build's own last line.
  assert.match(text.err, /Tests: 2 passed, 1 warned, 1 failed\n.*Build Completed in /);

  const json = await cli('build', 'run', dir, '--json', '-s', 'people');
  assert.equal(json.code, 0, json.err);
  const out = JSON.parse(json.out);
  assert.deepEqual(Object.keys(out), ['path', 'target', 'results', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names', 'tests']);
  assert.deepEqual(out.tests, [
    { node: 'public.people', test: 'unique(id)', status: 'pass', violations: 0, severity: 'error' },
    { node: 'public.people', test: 'not_null(name)', status: 'warn', violations: 1, severity: 'warn' },
    { node: 'public.people', test: 'expr(count(*) = 3)', status: 'pass', violations: 0, severity: 'error' },
  ]);
});
