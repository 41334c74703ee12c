// Model hooks in a local `service build run`:
// hooks.start / hooks.end (defaults first, then the model's) run by the
// pipeline step runner with model.*, target.* and env.* (the build's vars),
// their output as INF lines; a failing hook fails the model with the documented
// message and skips its dependents; seeds and `test` run no hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { duckSql } from './helpers/duck-file.js';
import { build, duckProject, logLines } from './helpers/build-cli.js';

test('hooks run around each model with model.*, target.* and env.*; a failing end hook fails the model', async () => {
  const dir = duckProject(
    {
      'staging/a.sql': [
        '/**',
        'hooks:',
        "  start: [{type: log, message: 'start {model.full_name} ({model.mode}) on {target.name} in {env.region}'}]",
        "  end: [{type: query, connection: '{target.name}', query: \"create or replace table main.hooked as select '{model.name}' as m\"}]",
        '**/',
        'select 1 as id',
        '',
      ].join('\n'),
      'marts/b.sql': "/**\nhooks: {end: [{check: 'model.schema == \"nope\"'}]}\n**/\nselect * from staging.a\n",
      'marts/c.sql': 'select * from marts.b\n',
    },
    "target: DUCK\nvars: {region: eu}\ndefaults: {hooks: {start: [{type: set, key: n, value: '{coalesce(store.n, 0) + 1}'}, {log: 'count {store.n}'}]}}\n",
  );
  const r = await build('run', dir);
  assert.equal(r.code, 1, r.err);
  const lines = logLines(r.err);
  assert.ok(lines.includes('INF start hook step_2 [a]: count 1') || lines.includes('INF start hook step_2 [b]: count 1'), lines.join('\n'));
  assert.ok(lines.includes('INF start hook step_3 [a]: start staging.a (full-refresh) on DUCK in eu'), lines.join('\n'));
  assert.match(r.out, /- marts\.b:\n {6}end hook failed for model 'b': step_1: check failed: model\.schema == "nope"/);
  assert.match(r.err, /fatal: build execution failed: build completed with 1 error\(s\): marts\.b: end hook failed for model 'b'/);
  assert.match(r.err, /\[3\/3\] marts\.c \(full-refresh\) \.+ SKIP/);
  // Through the file's actor, the process's one owner of the file (never a second instance).
  const rows = await duckSql(join(dir, 'wh.duckdb'), 'select m from main.hooked', 'objects');
  assert.deepEqual(rows, [{ m: 'a' }]);
});

test('a malformed hook entry fails its model with "error parsing start hook <i> for model \'<n>\'"', async () => {
  const dir = duckProject({ 'm.sql': '/**\nhooks: {start: [{type: log, message: ok}, {type: nope}]}\n**/\nselect 1 as x\n' });
  const r = await build('run', dir);
  assert.equal(r.code, 1);
  assert.match(r.out, /error parsing start hook 2 for model 'm': type: unknown step type "nope"/);
});
