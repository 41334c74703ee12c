// Monitor files: the documented example verbatim, every row of the
// Table with path and position, the duration grammar, and how
// settings for one table are chosen (later entries win, over defaults).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionKind } from '../engine/connections/connection.js';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import { parseJobDuration } from '../engine/jobs/job-duration.js';
import { monitorSettingsFor, type MonitorFile } from '../engine/jobs/monitor.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';

const CONNECTIONS: Record<string, ConnectionKind> = { WAREHOUSE: 'database', EXPORTS: 'file', ODD: 'unsupported' };
const ctx = (connections: Record<string, ConnectionKind> = {}): JobFileContext => ({ fileExists: () => false, connectionKind: (n) => connections[n] });

type Row = [path: string, message: string, line?: number, column?: number];
const problems = (text: string, c = ctx()): Row[] => validateJobFile('m.yaml', text, c).problems.map((p) => [p.path, p.message, p.line, p.column]);

const SPEC_EXAMPLE = `connection: WAREHOUSE
defaults:
  row_count: true
objects:
  public.*:
  public.orders:
    freshness_column: updated_at
    freshness_threshold: 6h
    columns:
      customer_id: [null_count, unique_count]
      amount: [min_max]
`;

function parsed(text: string): MonitorFile {
  const r = validateJobFile('m.yaml', text, ctx(CONNECTIONS));
  assert.deepEqual(r.problems, []);
  assert.ok(r.kind === 'monitor' && r.parsed !== undefined);
  return r.parsed;
}

test('the documented monitor example is valid and parses into the model', () => {
  const f = parsed(SPEC_EXAMPLE);
  assert.equal(f.connection, 'WAREHOUSE');
  assert.deepEqual(f.defaults, { row_count: true });
  assert.deepEqual(f.objects[0], { key: 'public.*', settings: {} });
  assert.deepEqual(f.objects[1], {
    key: 'public.orders',
    settings: {
      freshness_column: 'updated_at', freshness_threshold: '6h', freshness_threshold_seconds: 21600,
      columns: { customer_id: ['null_count', 'unique_count'], amount: ['min_max'] },
    },
  });
});

test('settings for a table: the last matching entry over defaults; row_count defaults to true', () => {
  const f = parsed('connection: W\ndefaults: {freshness_column: ts}\nobjects:\n  public.orders: {row_count: false}\n  public.*: {disabled: true}\n  sales.stg_*:\n');
  assert.deepEqual(monitorSettingsFor(f, 'public.orders'), { row_count: true, freshness_column: 'ts', disabled: true });
  assert.deepEqual(monitorSettingsFor(f, 'sales.stg_a'), { row_count: true, freshness_column: 'ts' });
  assert.equal(monitorSettingsFor(f, 'sales.orders'), undefined);
});

test('connection and objects are required; objects non-empty', () => {
  assert.deepEqual(problems('objects:\n  a.b:\n'), [['', '"connection" is required', 1, 1]]);
  assert.deepEqual(validateJobFile('m.yaml', 'connection: W\n', ctx(), { as: 'monitor' }).problems, [
    { path: '', message: '"objects" is required', line: 1, column: 1 },
  ]);
  assert.deepEqual(problems('connection: W\nobjects: {}\n'), [['objects', '"objects" must contain at least one object', 2, 10]]);
  assert.deepEqual(problems('connection: W\nobjects:\n'), [['objects', '"objects" must contain at least one object', 2, 1]]);
  assert.deepEqual(problems('connection: [W]\nobjects: [a.b]\n'), [
    ['connection', '"connection" must be a connection name', 1, 13],
    ['objects', '"objects" must be a mapping', 2, 10],
  ]);
});

test('object keys: schema.table or a schema wildcard', () => {
  const text = 'connection: W\nobjects:\n  public.orders:\n  public.*:\n  public.stg_*:\n  orders:\n  a.b.c:\n  "*.orders":\n  public.*_x:\n';
  assert.deepEqual(problems(text), [
    ['objects.orders', 'invalid object name "orders"', 6, 3],
    ['objects["a.b.c"]', 'invalid object name "a.b.c"', 7, 3],
    ['objects["*.orders"]', 'invalid object name "*.orders"', 8, 3],
    ['objects["public.*_x"]', 'invalid object name "public.*_x"', 9, 3],
  ]);
});

test('unknown keys at the top, in defaults, in objects', () => {
  const text = 'connection: W\nschedule: daily\ndefaults: {rowcount: true}\nobjects:\n  a.b: {freshness: 1h}\n';
  assert.deepEqual(problems(text), [
    ['schedule', 'unknown key "schedule"', 2, 1],
    ['defaults.rowcount', 'unknown key "rowcount"', 3, 12],
    ['objects["a.b"].freshness', 'unknown key "freshness"', 5, 9],
  ]);
});

test('freshness_threshold follows the duration grammar and needs freshness_column', () => {
  const text = 'connection: W\nobjects:\n  a.b: {freshness_column: ts, freshness_threshold: 6 hours}\n  a.c: {freshness_column: ts, freshness_threshold: 90}\n  a.d: {freshness_threshold: 1h30m}\n';
  assert.deepEqual(problems(text), [
    ['objects["a.b"].freshness_threshold', 'invalid duration "6 hours"', 3, 52],
    ['objects["a.c"].freshness_threshold', 'invalid duration "90"', 4, 52],
    ['objects["a.d"].freshness_threshold', 'freshness_threshold requires freshness_column', 5, 30],
  ]);
  const viaDefaults = 'connection: W\ndefaults: {freshness_threshold: 1d}\nobjects:\n  a.b: {freshness_column: ts}\n  a.c:\n';
  assert.deepEqual(problems(viaDefaults), [['objects["a.c"]', 'freshness_threshold requires freshness_column', 5, 3]]);
});

test('the job-file duration grammar (<int>(s|m|h|d|w))+', () => {
  assert.equal(parseJobDuration('90s'), 90);
  assert.equal(parseJobDuration('6h'), 21600);
  assert.equal(parseJobDuration('1h30m'), 5400);
  assert.equal(parseJobDuration('7d'), 604800);
  assert.equal(parseJobDuration('2w1d'), 1296000);
  for (const bad of ['', '6', 'h', '1.5h', '1mo', '1y', '1ms', '1h 30m', '-1h', '1H']) assert.equal(parseJobDuration(bad), undefined, bad);
});

test('column metrics are null_count, unique_count, min_max', () => {
  const text = 'connection: W\nobjects:\n  a.b:\n    columns:\n      id: [null_count, avg]\n      "*": [min_max]\n      x: min_max\n';
  assert.deepEqual(problems(text), [
    ['objects["a.b"].columns.id[1]', 'unknown metric "avg"; expected one of null_count, unique_count, min_max', 5, 24],
    ['objects["a.b"].columns.x', '"x" must be a list', 7, 10],
  ]);
});

test('the connection must be a database connection when it is defined', () => {
  assert.deepEqual(problems('connection: EXPORTS\nobjects: {a.b: }\n', ctx(CONNECTIONS)), [
    ['connection', 'monitor connection EXPORTS must be a database connection', 1, 13],
  ]);
  assert.deepEqual(problems('connection: ODD\nobjects: {a.b: }\n', ctx(CONNECTIONS)), [
    ['connection', 'monitor connection ODD must be a database connection', 1, 13],
  ]);
  assert.deepEqual(problems('connection: LATER\nobjects: {a.b: }\n', ctx(CONNECTIONS)), []);
  assert.deepEqual(problems('connection: ${DB}\nobjects: {a.b: }\n', ctx(CONNECTIONS)), []);
});
