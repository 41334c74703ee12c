// Job-file classification: every row of the table, the
// invalid-YAML rejection with the syntax error's line (acceptance #8), and the query
// header rule that separates query files from build models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyJobFile } from '../engine/jobs/classify.js';

test('a YAML file with steps is a pipeline, even when it also has streams and objects', () => {
  assert.deepEqual(classifyJobFile('p.yaml', 'steps: []\nstreams: {}\nobjects: {}\n'), { kind: 'pipeline' });
  assert.deepEqual(classifyJobFile('dir/p.yml', 'steps:\n  - log: hi\n'), { kind: 'pipeline' });
});

test('a YAML file with streams but no steps is a replication', () => {
  assert.deepEqual(classifyJobFile('r.yaml', 'source: A\nstreams:\n  a.b:\nobjects: {}\n'), { kind: 'replication' });
});

test('a YAML file with objects but neither steps nor streams is a monitor', () => {
  assert.deepEqual(classifyJobFile('m.yml', 'connection: W\nobjects:\n  public.*:\n'), { kind: 'monitor' });
});

test('quoted top-level keys count like plain ones', () => {
  assert.deepEqual(classifyJobFile('p.yaml', '"steps": []\n'), { kind: 'pipeline' });
});

test('YAML files without those keys, with another top level, or empty are plain files', () => {
  for (const text of ['name: x\n', '- steps\n', 'steps\n', '', '# only a comment\n', 'config:\n  steps: []\n']) {
    assert.deepEqual(classifyJobFile('x.yaml', text), { kind: null }, JSON.stringify(text));
  }
});

test('only .yaml/.yml files are read as YAML; the extension compares case-insensitively', () => {
  assert.deepEqual(classifyJobFile('steps.txt', 'steps: []\n'), { kind: null });
  assert.deepEqual(classifyJobFile('p.json', '{"steps": []}'), { kind: null });
  assert.deepEqual(classifyJobFile('p.yaml.bak', 'steps: []\n'), { kind: null });
  assert.deepEqual(classifyJobFile('P.YAML', 'steps: []\n'), { kind: 'pipeline' });
});

test('a multi-document file is classified by its first document', () => {
  assert.deepEqual(classifyJobFile('p.yaml', 'steps: []\n---\nother: 1\n'), { kind: 'pipeline' });
  assert.deepEqual(classifyJobFile('p.yaml', 'other: 1\n---\nsteps: []\n'), { kind: null });
});

test('invalid YAML cannot be classified: one problem per syntax error, path "", line and column of the error (acceptance #8)', () => {
  const body = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    mode: full-refresh\n   object: x\n';
  const c = classifyJobFile('replications/bad.yaml', body);
  assert.equal(c.kind, 'invalid-yaml');
  assert.ok(c.kind === 'invalid-yaml');
  assert.equal(c.problems.length, 1);
  assert.equal(c.problems[0]!.path, '');
  assert.equal(c.problems[0]!.line, 6);
  assert.equal(c.problems[0]!.column, 1);
  assert.ok(c.problems[0]!.message.length > 0);
});

test('a syntax error in a later document also rejects the file, even if it is no job file', () => {
  const c = classifyJobFile('x.yml', 'a: 1\n---\nb: "unterminated\n');
  assert.equal(c.kind, 'invalid-yaml');
  assert.ok(c.kind === 'invalid-yaml');
  assert.equal(c.problems[0]!.line, 4);
});

test('duplicate keys do not stop classification (they are validation problems)', () => {
  assert.deepEqual(classifyJobFile('r.yaml', 'streams: {}\nstreams: {}\n'), { kind: 'replication' });
});

test('a .sql file whose header declares a connection is a query file', () => {
  assert.deepEqual(classifyJobFile('q.sql', '-- connection: WAREHOUSE\nselect 1;\n'), { kind: 'query' });
  assert.deepEqual(classifyJobFile('q.sql', '\n-- Nightly rebuild\n\n--CONNECTION:WAREHOUSE\nselect 1\n'), { kind: 'query' });
  assert.deepEqual(classifyJobFile('q.sql', '   --  Connection:  LAKE  trailing words\nselect 1\n'), { kind: 'query' });
  assert.deepEqual(classifyJobFile('Q.SQL', '-- connection: W\nselect 1\n'), { kind: 'query' });
});

test('a .sql file without a connection header is a plain file (build models, macros, included SQL)', () => {
  assert.deepEqual(classifyJobFile('models/a.sql', 'select 1\n'), { kind: null });
  assert.deepEqual(classifyJobFile('q.sql', 'select 1;\n-- connection: W\n'), { kind: null }, 'after the first statement line the header is over');
  assert.deepEqual(classifyJobFile('q.sql', '/* c */\n-- connection: W\nselect 1\n'), { kind: null }, 'a block comment ends the header');
  assert.deepEqual(classifyJobFile('q.sql', '-- connection:\nselect 1\n'), { kind: null }, 'no name, no declaration');
  assert.deepEqual(classifyJobFile('q.txt', '-- connection: W\nselect 1\n'), { kind: null });
});
