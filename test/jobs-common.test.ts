// Rules common to all job files and the Problem shape:
// one document, a mapping at the top, duplicate and unknown keys at every
// level, anchors and aliases, `file://` references, the path syntax and
// document order of the problem list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionKind } from '../engine/connections/connection.js';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import { formatPath } from '../engine/jobs/problem.js';
import { isProjectFileName } from '../engine/jobs/file-ref.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';

function ctx(files: readonly string[] = [], connections: Record<string, ConnectionKind> = {}): JobFileContext & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    fileExists: (p) => {
      asked.push(p);
      return files.includes(p);
    },
    connectionKind: (n) => connections[n],
  };
}

const REPL = 'source: W\ntarget: L\nstreams:\n  public.users:\n    object: main.users\n';

test('a valid file has no problems and a parsed model', () => {
  const r = validateJobFile('r.yaml', REPL, ctx());
  assert.deepEqual(r.problems, []);
  assert.ok('parsed' in r && r.parsed !== undefined);
});

test('a plain file is not validated', () => {
  assert.deepEqual(validateJobFile('notes.yaml', 'a: 1\na: 2\n', ctx()), { kind: null, problems: [] });
  assert.deepEqual(validateJobFile('m.sql', 'select 1', ctx()), { kind: null, problems: [] });
});

test('multiple documents: one problem at the second document, the first is still validated', () => {
  const r = validateJobFile('r.yaml', `${REPL}    mode: merge\n---\nx: 1\n`, ctx());
  assert.equal(r.kind, 'replication');
  assert.deepEqual(r.problems, [
    { path: 'streams["public.users"].mode', message: 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill', line: 6, column: 11 },
    { path: '', message: 'multiple YAML documents are not supported', line: 7, column: 1 },
  ]);
  assert.equal('parsed' in r, false);
});

test('an empty second document still counts as a second document', () => {
  const r = validateJobFile('r.yaml', `${REPL}---\n`, ctx());
  assert.deepEqual(r.problems, [{ path: '', message: 'multiple YAML documents are not supported', line: 6, column: 1 }]);
});

test('top level must be a mapping when the file is validated as a given kind', () => {
  assert.deepEqual(validateJobFile('r.yaml', '- a\n- b\n', ctx(), { as: 'replication' }).problems, [
    { path: '', message: 'top level must be a mapping', line: 1, column: 1 },
  ]);
  assert.deepEqual(validateJobFile('r.yaml', '', ctx(), { as: 'pipeline' }).problems, [
    { path: '', message: 'top level must be a mapping', line: 1, column: 1 },
  ]);
});

test('validating as another kind reports that kind\'s problems', () => {
  const r = validateJobFile('p.yaml', 'steps:\n  - log: hi\n', ctx(), { as: 'replication' });
  assert.equal(r.kind, 'replication');
  assert.deepEqual(r.problems.map((p) => p.message), [
    'unknown key "steps"', '"source" is required', '"target" is required', '"streams" is required',
  ]);
});

test('duplicate keys at the top level and nested, each at the repeated key', () => {
  const text = 'source: W\ntarget: L\nsource: X\nstreams:\n  public.users:\n    object: a.b\n    object: c.d\n  public.users:\n    mode: truncate\n';
  assert.deepEqual(validateJobFile('r.yaml', text, ctx()).problems, [
    { path: 'source', message: 'duplicate key "source"', line: 3, column: 1 },
    { path: 'streams["public.users"].object', message: 'duplicate key "object"', line: 7, column: 5 },
    { path: 'streams["public.users"]', message: 'duplicate key "public.users"', line: 8, column: 3 },
  ]);
});

test('duplicate keys inside flow mappings and pipeline steps', () => {
  const text = 'steps:\n  - {log: a, log: b}\n';
  assert.deepEqual(validateJobFile('p.yaml', text, ctx()).problems, [{ path: 'steps[0].log', message: 'duplicate key "log"', line: 2, column: 14 }]);
});

test('unknown keys at every level are reported with their path and position', () => {
  const text = [
    'source: W',
    'target: L',
    'Source: X',
    'defaults:',
    '  object: a.b',
    '  objekt: c',
    'streams:',
    '  public.users:',
    '    modes: truncate',
    '    source_options:',
    '      header: true',
    '      headers: true',
    '    target_options:',
    '      add_new_columns: true',
    '      batchlimit: 10',
    '',
  ].join('\n');
  assert.deepEqual(validateJobFile('r.yaml', text, ctx()).problems, [
    { path: 'Source', message: 'unknown key "Source"', line: 3, column: 1 },
    { path: 'defaults.objekt', message: 'unknown key "objekt"', line: 6, column: 3 },
    { path: 'streams["public.users"].modes', message: 'unknown key "modes"', line: 9, column: 5 },
    { path: 'streams["public.users"].source_options.headers', message: 'unknown source option "headers"', line: 12, column: 7 },
    { path: 'streams["public.users"].target_options.batchlimit', message: 'unknown target option "batchlimit"', line: 15, column: 7 },
  ]);
});

test('anchors and aliases are allowed; an alias is validated like the anchored value', () => {
  const ok = 'source: W\ntarget: L\nstreams:\n  public.a: &s\n    object: main.a\n    mode: truncate\n  public.b: *s\n';
  assert.deepEqual(validateJobFile('r.yaml', ok, ctx()).problems, []);
  const bad = 'source: W\ntarget: L\nstreams:\n  public.a: &s\n    object: main.a\n    mode: merge\n  public.b: *s\n';
  const problems = validateJobFile('r.yaml', bad, ctx()).problems;
  assert.deepEqual(problems.map((p) => p.path), ['streams["public.a"].mode', 'streams["public.b"].mode']);
  assert.deepEqual(problems.map((p) => p.line), [6, 6], 'both point at the anchored text');
});

test('an alias without an anchor is a problem, not a crash', () => {
  const text = 'source: W\ntarget: L\nstreams:\n  public.a:\n    object: a.b\n    mode: *nope\n';
  assert.deepEqual(validateJobFile('r.yaml', text, ctx()).problems, [
    { path: 'streams["public.a"].mode', message: 'unresolved alias *nope', line: 6, column: 11 },
  ]);
});

test('alias expansion is bounded ("billion laughs")', () => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
  const text = `source: W\ntarget: L\nstreams: {public.a: {object: a.b}}\nenv:\n  ${lines.join('\n  ')}\n`;
  const r = validateJobFile('r.yaml', text, ctx());
  assert.ok(r.problems.some((p) => p.message === 'YAML aliases add more than 10000 nodes (the limit for alias expansion)'));
});

test('file:// references must exist; malformed names are missing without asking the callback', () => {
  const c = ctx(['queries/a.sql']);
  const text = [
    'source: W',
    'target: L',
    'streams:',
    '  q1:',
    '    sql: file://queries/a.sql',
    '    object: main.q1',
    '  q2:',
    '    sql: file://queries/missing.sql',
    '    object: main.q2',
    '  q3:',
    '    sql: file://../etc/passwd',
    '    object: main.q3',
    '  q4:',
    '    sql: file:///etc/passwd',
    '    object: main.q4',
    '  q5:',
    '    sql: file://queries/${NAME}.sql',
    '    object: main.q5',
    '',
  ].join('\n');
  assert.deepEqual(validateJobFile('r.yaml', text, c).problems, [
    { path: 'streams.q2.sql', message: 'file "queries/missing.sql" does not exist', line: 8, column: 10 },
    { path: 'streams.q3.sql', message: 'file "../etc/passwd" does not exist', line: 11, column: 10 },
    { path: 'streams.q4.sql', message: 'file "/etc/passwd" does not exist', line: 14, column: 10 },
  ]);
  assert.deepEqual(c.asked, ['queries/a.sql', 'queries/missing.sql'], 'unsafe and run-time names never reach the callback');
});

test('name shapes for project files', () => {
  for (const ok of ['a.sql', 'dir/a.sql', 'a b/c']) assert.equal(isProjectFileName(ok), true, ok);
  for (const bad of ['', '/a', 'C:/a', 'a\\b', '../a', 'a/../b', 'a//b', './a', 'a/', '.git/config', 'a\0b', 'x'.repeat(256)]) {
    assert.equal(isProjectFileName(bad), false, JSON.stringify(bad));
  }
  assert.equal(isProjectFileName('models/', true), true, 'a directory may end with /');
});

test('path syntax: dotted keys, [i] positions, ["…"] for keys with dots', () => {
  assert.equal(formatPath([]), '');
  assert.equal(formatPath(['streams', 'public.users', 'mode']), 'streams["public.users"].mode');
  assert.equal(formatPath(['steps', 2, 'type']), 'steps[2].type');
  assert.equal(formatPath(['steps', 0, 'steps', 1, 'id']), 'steps[0].steps[1].id');
  assert.equal(formatPath(['streams', 'exports/', 'object']), 'streams.exports/.object');
  assert.equal(formatPath(['objects', 'a "b"']), 'objects["a \\"b\\""]');
});

test('problems come in document order, whatever order the checks ran in', () => {
  const text = 'streams:\n  public.a:\n    mode: merge\nsource: 5\ntarget: L\nextra: 1\n';
  const r = validateJobFile('r.yaml', text, ctx());
  assert.deepEqual(r.problems.map((p) => [p.line, p.message]), [
    [2, '"object" is required (set it on the stream or in defaults)'],
    [3, 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill'],
    [4, '"source" must be a connection name'],
    [6, 'unknown key "extra"'],
  ]);
});
