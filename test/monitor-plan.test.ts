// Monitor logic without a database: which objects a run
// measures (wildcards, schemata.exclude, disabled, baseline added/dropped),
// the change events, freshness ages, the one statement per object for both
// targets and how its text values come back as JSON, and the validation
// of `schemata`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import type { MonitorFile } from '../engine/jobs/monitor.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';
import {
  baselineFromTasks, decodeValue, freshnessOf, instantOf, measureQuery, planMonitor, schemaChangeEvents, staleEvent, type Baseline, type CatalogTable,
} from '../engine/monitor/index.js';
import type { TaskRecord } from '../engine/state/store.js';

const ctx: JobFileContext = { fileExists: () => false, connectionKind: () => 'database' };

function monitor(text: string): MonitorFile {
  const r = validateJobFile('m.yaml', text, ctx);
  assert.deepEqual(r.problems, []);
  assert.ok(r.kind === 'monitor' && r.parsed !== undefined);
  return r.parsed;
}

const catalog = (...names: string[]): CatalogTable[] => names.map((n) => ({ schema: n.split('.')[0]!, name: n.split('.')[1]! }));
const baseline = (...tables: string[]): Baseline => ({ execId: 'E1', tables: new Map(tables.map((t) => [t, [{ name: 'id', type: 'integer' }]])) });
const summary = (plan: ReturnType<typeof planMonitor>) =>
  plan.map((o) => (o.kind === 'dropped' ? `-${o.table} (${o.matchedBy})` : `${o.table} ${o.matchedBy}${o.added ? ' added' : ''}${o.tracked ? '' : ' untracked'}`));

test('wildcards expand in file order, sorted by name; a table reached twice keeps its first place; explicit tables need not exist', () => {
  const f = monitor('connection: W\nobjects:\n  sales.zz:\n  public.*:\n  sales.stg_*:\n  public.orders: {row_count: false}\n  sales.missing:\n');
  const plan = planMonitor(f, catalog('public.users', 'public.orders', 'sales.stg_b', 'sales.stg_a', 'sales.orders', 'other.x'), undefined);
  assert.deepEqual(summary(plan), ['sales.zz sales.zz', 'public.orders public.orders', 'public.users public.*', 'sales.stg_a sales.stg_*', 'sales.stg_b sales.stg_*', 'sales.missing sales.missing']);
  const orders = plan.find((o) => o.table === 'public.orders');
  assert.ok(orders?.kind === 'measure');
  assert.equal(orders.settings.row_count, false, 'the later explicit entry decides the settings');
  assert.deepEqual(orders.relation, { schema: 'public', name: 'orders' });
});

test('disabled drops a table; schemata.exclude keeps wildcards away but an explicit entry is still measured, untracked', () => {
  const f = monitor("connection: W\nschemata:\n  exclude: ['*.*_tmp', 'public.audit?']\nobjects:\n  public.*:\n  public.secret: {disabled: true}\n  public.load_tmp:\n");
  const plan = planMonitor(f, catalog('public.users', 'public.secret', 'public.x_tmp', 'public.load_tmp', 'public.audit1', 'public.audit12'), undefined);
  assert.deepEqual(summary(plan), ['public.audit12 public.*', 'public.users public.*', 'public.load_tmp public.load_tmp untracked']);
});

test('against a baseline: wildcard tables it lacks are added, its tables that no longer exist are dropped (not excluded, not disabled, not explicit)', () => {
  const f = monitor("connection: W\nschemata: {exclude: ['*.*_tmp']}\nobjects:\n  public.*:\n  public.off: {disabled: true}\n  public.kept:\n");
  const plan = planMonitor(f, catalog('public.users', 'public.fresh'), baseline('public.users', 'public.gone', 'public.off', 'public.old_tmp', 'public.kept', 'sales.elsewhere'));
  assert.deepEqual(summary(plan), ['public.fresh public.* added', 'public.users public.*', 'public.kept public.kept', '-public.gone (public.*)']);
  const dropped = plan.at(-1)!;
  assert.ok(dropped.kind === 'dropped');
  assert.equal(dropped.baselineExecId, 'E1');
  assert.deepEqual(summary(planMonitor(f, catalog('public.users', 'public.fresh'), undefined)), ['public.fresh public.*', 'public.users public.*', 'public.kept public.kept'], 'no baseline: no changes');
});

test('the baseline: tables of success/warning monitor tasks with their schema; a dropped-table task is not part of it', () => {
  const task = (stream: string, status: TaskRecord['status'], metrics: TaskRecord['metrics']): TaskRecord => ({
    exec_id: 'E', task_id: 't', seq: 1, stream_name: stream, object: stream, mode: 'monitor', status, error: null, start_time: null, end_time: null, rows: 0, bytes: 0, metrics,
  });
  const b = baselineFromTasks('E', [
    task('public.a', 'success', { schema: [{ name: 'id', type: 'integer' }], events: [] }),
    task('public.b', 'warning', { schema: 'garbled', events: [] }),
    task('public.c', 'warning', { schema: [], events: [{ type: 'table_dropped', message: 'x' }] }),
    task('public.d', 'error', null),
  ]);
  assert.deepEqual([...b.tables], [['public.a', [{ name: 'id', type: 'integer' }]], ['public.b', null]]);
});

test('schema change events name the table and the column', () => {
  const before = [{ name: 'id', type: 'integer' }, { name: 'amount', type: 'integer' }, { name: 'old', type: 'text' }];
  const now = [{ name: 'id', type: 'integer' }, { name: 'amount', type: 'numeric' }, { name: 'note', type: 'text' }];
  assert.deepEqual(schemaChangeEvents('public.orders', now, before), [
    { type: 'column_type_altered', message: 'public.orders: column amount changed type from integer to numeric' },
    { type: 'column_added', message: 'public.orders: column note (text) added' },
    { type: 'column_dropped', message: 'public.orders: column old (text) dropped' },
  ]);
  assert.deepEqual(schemaChangeEvents('public.orders', now, now), []);
});

test('freshness: age against the clock, stale over the threshold or without a value, never without a threshold', () => {
  const now = new Date('2025-03-01T08:00:00.000Z');
  const f = freshnessOf('updated_at', '2025-03-01T01:00:00Z', 6 * 3600, now);
  assert.deepEqual(f, { column: 'updated_at', max_value: '2025-03-01T01:00:00Z', age_seconds: 25200, threshold_seconds: 21600, stale: true });
  assert.deepEqual(staleEvent('public.orders', f, '6h'), {
    type: 'data_stale',
    message: 'public.orders: max(updated_at) = 2025-03-01T01:00:00Z is 7h old (25200 s), over the freshness_threshold 6h (21600 s)',
  });
  assert.equal(freshnessOf('u', '2025-03-01T03:00:00.5Z', 21600, now).stale, false);
  assert.equal(freshnessOf('u', '2025-03-01T03:00:00.5Z', 21600, now).age_seconds, 17999.5);
  const empty = freshnessOf('updated_at', null, 3600, now);
  assert.deepEqual([empty.stale, empty.age_seconds], [true, null]);
  assert.match(staleEvent('public.orders', empty, '1h')!.message, /^public\.orders: max\(updated_at\) has no value \(the table is empty\)/);
  assert.deepEqual([freshnessOf('u', null, undefined, now).stale, staleEvent('t', freshnessOf('u', null, undefined, now), undefined)], [false, undefined]);
  assert.equal(freshnessOf('d', '2025-02-28', 86_400, now).age_seconds, 115_200, 'a date counts from midnight UTC');
});

test('instants: zone-less timestamps are UTC, microseconds are cut to milliseconds', () => {
  assert.equal(instantOf('2025-03-01T02:00:00.123456'), Date.UTC(2025, 2, 1, 2, 0, 0, 123));
  assert.equal(instantOf('2025-03-01T02:00:00Z'), Date.UTC(2025, 2, 1, 2));
  assert.equal(instantOf('2025-03-01 02:00:00+02'), Date.UTC(2025, 2, 1, 0));
  assert.ok(Number.isNaN(instantOf('yesterday')));
});

test('values read back as text become JSON: exact numbers, booleans, ISO timestamps', () => {
  assert.deepEqual(
    [
      decodeValue('7.25', 'number'), decodeValue('12345678901234567890', 'number'), decodeValue('NaN', 'number'), decodeValue('true', 'boolean'),
      decodeValue('2025-03-01 02:00:00.000000', 'timestamptz'), decodeValue('2025-03-01 02:00:00.120000', 'timestamp'), decodeValue('2025-03-01', 'date'),
      decodeValue('{"a":1}', 'string'), decodeValue(null, 'number'),
    ],
    [7.25, '12345678901234567890', 'NaN', true, '2025-03-01T02:00:00Z', '2025-03-01T02:00:00.12', '2025-03-01', '{"a":1}', null],
  );
});

test('one statement per object: count, freshness and column metrics in one scan, per target', () => {
  const req = {
    relation: { schema: 'public', name: 'orders' },
    freshness: { column: 'updated_at', category: 'timestamptz' as const },
    columns: [
      { name: 'customer_id', category: 'number' as const, metrics: ['null_count', 'unique_count'] as const },
      { name: 'payload', category: 'string' as const, metrics: ['unique_count', 'min_max'] as const },
      { name: 'active', category: 'boolean' as const, metrics: ['min_max'] as const },
    ],
  };
  const pg = measureQuery('postgres', req);
  assert.equal(
    pg.sql,
    `SELECT COUNT(*), to_char(MAX("updated_at") AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), COUNT(*) - COUNT("customer_id"), COUNT(DISTINCT "customer_id"), ` +
      `COUNT(DISTINCT CAST("payload" AS text)), MIN(CAST("payload" AS text)), MAX(CAST("payload" AS text)), CAST(bool_and("active") AS text), CAST(bool_or("active") AS text) FROM "public"."orders"`,
  );
  assert.deepEqual(pg.read(['3', '2025-03-01 02:00:00.000000', '1', '2', '2', 'a', 'b', 'false', 'true']), {
    rowCount: 3,
    freshnessText: '2025-03-01 02:00:00.000000',
    columns: { customer_id: { null_count: 1, unique_count: 2 }, payload: { unique_count: 2, min: 'a', max: 'b' }, active: { min: false, max: true } },
  });
  const duck = measureQuery('duckdb', req);
  assert.equal(
    duck.sql,
    `SELECT COUNT(*), strftime(MAX("updated_at") AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f'), COUNT(*) - COUNT("customer_id"), COUNT(DISTINCT "customer_id"), ` +
      `COUNT(DISTINCT CAST("payload" AS VARCHAR)), MIN(CAST("payload" AS VARCHAR)), MAX(CAST("payload" AS VARCHAR)), CAST(MIN("active") AS VARCHAR), CAST(MAX("active") AS VARCHAR) FROM "public"."orders"`,
  );
  assert.equal(duck.read([3n, null, 0n, 2n, 0n, null, null, null, null]).rowCount, 3, 'DuckDB BigInt counts');
  assert.equal(measureQuery('postgres', { relation: { schema: 's', name: 'we"ird' }, columns: [] }).sql, 'SELECT COUNT(*) FROM "s"."we""ird"');
});

test('schemata: only exclude, a list of schema.table glob patterns', () => {
  const problems = (text: string) => validateJobFile('m.yaml', text, ctx).problems.map((p) => [p.path, p.message]);
  assert.deepEqual(monitor("connection: W\nschemata:\n  exclude: ['*.*_tmp', 'staging.?x']\nobjects:\n  a.b:\n").schemata, { exclude: ['*.*_tmp', 'staging.?x'] });
  assert.deepEqual(monitor('connection: W\nobjects:\n  a.b:\n').schemata, { exclude: [] });
  assert.deepEqual(problems("connection: W\nschemata:\n  exclude: ['tmp', 'a.b.c']\n  enabled: true\nobjects:\n  a.b:\n"), [
    ['schemata.exclude[0]', 'invalid exclude pattern "tmp"'],
    ['schemata.exclude[1]', 'invalid exclude pattern "a.b.c"'],
    ['schemata.enabled', 'unknown key "enabled"'],
  ]);
  assert.deepEqual(problems('connection: W\nschemata: [x]\nobjects:\n  a.b:\n'), [['schemata', '"schemata" must be a mapping']]);
  assert.deepEqual(problems('connection: W\nschemata: {exclude: x}\nobjects:\n  a.b:\n'), [['schemata.exclude', '"exclude" must be a list of strings']]);
});
