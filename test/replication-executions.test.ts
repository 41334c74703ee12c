// Replication executions through the daemon's HTTP API on real PostgreSQL
// and DuckDB (tasks, execution states, cancel, replication files, acceptance rows 17, 20 and 24 with the
// replication bodies the docs name): wildcard expansion into one task per
// stream sorted within the wildcard, object templates, a stream that fails
// marks only its own task, disabled streams are skipped, the job's `streams`
// subset and the run's overrides, task records with live output, cancel,
// failures in the middle of a load into PostgreSQL that leave the previous
// table (full-refresh) or the pre-run rows (incremental, truncate) intact,
// and incremental file streams that read only files changed since the last
// successful run.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { usePgDaemon } from './helpers/pg-daemon.js';
import { eventually, type ApiServer } from './helpers/api-server.js';
import { duckRows, pgQuery } from './helpers/replication-fixtures.js';

let files = '';
const fx = usePgDaemon('repl_exec', `
    create table public.users (id int primary key, name text);
    insert into public.users values (1, 'ada'), (2, 'bob'), (3, 'cy');
    create table public.zeta (id int, v text); insert into public.zeta values (1, 'z');
    create table public.orders (id int primary key, amount numeric(10,2), updated_at timestamptz);
    insert into public.orders values (1, 9.99, '2024-01-01 00:00:00+00'), (2, 5.00, '2024-01-02 00:00:00+00');
    create table public.broken (id int);
    create table public.skipme (id int);
    create schema other; create table other.t (id int)`, {
  afterStart: async (api) => {
    files = path.join(api.base, 'files');
    await mkdir(path.join(files, 'in'), { recursive: true });
    const env = await readFile(api.acme.envFile, 'utf8');
    await writeFile(api.acme.envFile, env.replace('connections:\n', `connections:\n  FILES:\n    type: file\n    url: file://${files}\n`));
  },
});
const ready = (t: TestContext) => fx.ready(t);

async function save(a: ApiServer, name: string, body: string): Promise<string | undefined> {
  const res = await a.request('POST', '/project/file/save', { body: { file: { name, body } } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.default_job_id as string | undefined;
}

/** Replaces the job with its current fields plus `patch` (POST /project/job/save). */
async function updateJob(a: ApiServer, jobId: string | undefined, patch: (job: any) => any): Promise<void> {
  const job = (await a.request('GET', `/project/job/get?job_id=${jobId}`)).body;
  const res = await a.request('POST', '/project/job/save', { body: { job: patch(job) } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function run(a: ApiServer, body: Record<string, unknown>): Promise<string> {
  const res = await a.request('POST', '/project/job/run', { body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.exec_id as string;
}

async function execution(a: ApiServer, execId: string): Promise<any> {
  const res = await a.request('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: execId }))}`);
  return res.body.executions[0];
}

async function finished(a: ApiServer, execId: string): Promise<any> {
  return eventually(async () => {
    const e = await execution(a, execId);
    return e.status === 'queued' || e.status === 'running' ? undefined : e;
  }, 60_000, `execution ${execId}`);
}

async function tasks(a: ApiServer, execId: string, excludeOutput = true): Promise<any[]> {
  const res = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: execId, exclude_output: excludeOutput } });
  assert.equal(res.status, 200);
  return res.body.tasks;
}

const lake = () => path.join(path.dirname(fx.api!.acme.envFile), 'lake.duckdb');

test('rows 17 and 24: the users replication into LAKE succeeds with 3 rows; its task record carries the log', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const job = await save(a, 'replications/users.yaml', "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: '{target_schema}.{stream_table}'\nstreams:\n  public.users:\n    mode: full-refresh\n");
  const execId = await run(a, { job_id: job });
  const done = await finished(a, execId);
  assert.deepEqual([done.status, done.error, done.rows, done.status_map.success], ['success', null, 3, 1]);
  assert.ok(done.bytes > 0);
  const [task] = await tasks(a, execId);
  assert.deepEqual(
    [task.task_id, task.stream_name, task.object, task.mode, task.status, task.error, task.rows, task.bytes],
    ['task_1', 'public.users', 'main.users', 'full-refresh', 'success', null, 3, done.bytes],
  );
  assert.ok(!('output' in task));
  assert.ok(task.start_time !== null && task.end_time !== null);
  const [withOutput] = await tasks(a, execId, false);
  assert.match(withOutput.output, /stream public\.users: WAREHOUSE → LAKE main\.users \(full-refresh\)/);
  assert.match(withOutput.output, /3 rows, \d+ bytes in/);
  assert.doesNotMatch(withOutput.output, /postgres(ql)?:\/\//);
  assert.deepEqual(await duckRows(lake(), 'select id, name from main.users order by id'), [[1, 'ada'], [2, 'bob'], [3, 'cy']]);
});

test('wildcards expand sorted after explicit keys win; templates; one failing stream; a disabled stream is skipped', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const job = await save(a, 'replications/all.yaml', [
    'source: WAREHOUSE',
    'target: LAKE',
    'defaults:',
    "  object: '{target_schema}.{stream_schema}_{stream_table}'",
    'streams:',
    '  public.*:',
    '  public.orders:',
    '    primary_key: [id]',
    '    update_key: updated_at',
    "    object: 'raw.{stream_table_upper}_{YYYY}'",
    '  public.broken:',
    '    where: no_such_column > 1',
    '  public.skipme:',
    '    disabled: true',
    '',
  ].join('\n'));
  await updateJob(a, job, (j) => ({ ...j, config: { ...j.config, threads: 3 } }));
  const execId = await run(a, { job_id: job });
  const done = await finished(a, execId);
  assert.equal(done.status, 'error');
  assert.match(done.error, /^public\.broken: .*no_such_column/);
  assert.deepEqual(done.status_map, { queued: 0, running: 0, success: 3, error: 1, warning: 0, skipped: 1, cancelled: 0, interrupted: 0 });
  const year = String(new Date(done.start_time).getUTCFullYear());
  assert.deepEqual((await tasks(a, execId)).map((x) => [x.task_id, x.stream_name, x.object, x.mode, x.status, x.rows]), [
    ['task_1', 'public.users', 'main.public_users', 'full-refresh', 'success', 3],
    ['task_2', 'public.zeta', 'main.public_zeta', 'full-refresh', 'success', 1],
    ['task_3', 'public.orders', `raw.ORDERS_${year}`, 'incremental', 'success', 2],
    ['task_4', 'public.broken', 'main.public_broken', 'full-refresh', 'error', 0],
    ['task_5', 'public.skipme', 'main.public_skipme', 'full-refresh', 'skipped', 0],
  ]);
  assert.deepEqual(await duckRows(lake(), `select count(*) from raw."ORDERS_${year}"`), [[2]]);

  // The run's `streams` override (a name matched by the wildcard) and `mode` override.
  const one = await run(a, { job_id: job, streams: ['public.zeta'], mode: 'truncate' });
  const oneDone = await finished(a, one);
  assert.equal(oneDone.status, 'success');
  assert.deepEqual((await tasks(a, one)).map((x) => [x.stream_name, x.mode]), [['public.zeta', 'truncate']]);
});

test('the job `streams` subset runs only the named streams; a missing connection fails the execution', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const job = await save(a, 'replications/subset.yaml', "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: 'sub.{stream_table}'\nstreams:\n  public.*:\n");
  await updateJob(a, job, (j) => ({ ...j, streams: ['public.users', 'public.zeta'] }));
  const done = await finished(a, await run(a, { job_id: job }));
  assert.equal(done.status, 'success');
  assert.deepEqual((await tasks(a, done.exec_id)).map((x) => x.stream_name), ['public.users', 'public.zeta']);

  // Every stream disabled: nothing did work, so the execution is `skipped`.
  const off = await save(a, 'replications/off.yaml', "source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.off_users\n    disabled: true\n");
  const offDone = await finished(a, await run(a, { job_id: off }));
  assert.equal(offDone.status, 'skipped');
  assert.deepEqual((await tasks(a, offDone.exec_id)).map((x) => x.status), ['skipped']);

  const nope = await save(a, 'replications/nope.yaml', 'source: NOPE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.x\n');
  const failed = await finished(a, await run(a, { job_id: nope }));
  assert.deepEqual([failed.status, failed.error], ['error', 'connection NOPE not found']);
});

/** Sum and count of tgt.<table> on WAREHOUSE, and temp tables left behind. */
async function targetState(table: string): Promise<{ n: number; sum: number; leftovers: number }> {
  const [r] = await pgQuery(fx.db!.url, `select count(*)::int as n, coalesce(sum(v), 0)::bigint as sum from tgt.${table}`);
  const [l] = await pgQuery(fx.db!.url, "select count(*)::int as n from pg_class where relname like '\\_service\\_%'");
  return { n: r.n, sum: Number(r.sum), leftovers: l.n };
}

test('a load into PostgreSQL failing mid-way leaves the previous table (full-refresh) and the pre-run rows (incremental, truncate)', async (t) => {
  const a = await ready(t);
  if (!a) return;
  await pgQuery(fx.db!.url, 'create schema tgt');
  // FAIL_AT = 0 never fails; otherwise row FAIL_AT divides by zero after ~90,000 rows were sent.
  const sql = 'select g as id, case when g = ${FAIL_AT} then 1 / (g - g) else g * ${FACTOR} end as v from generate_series(1, 100000) g';
  for (const [mode, extra] of [['full-refresh', ''], ['incremental', '\n    primary_key: [id]'], ['truncate', '']] as const) {
    const table = `mid_${mode.replace('-', '_')}`;
    const job = await save(a, `replications/${table}.yaml`, `source: WAREHOUSE\ntarget: WAREHOUSE\nstreams:\n  ${table}:\n    sql: "${sql}"\n    object: tgt.${table}\n    mode: ${mode}${extra}\n`);
    const ok = await finished(a, await run(a, { job_id: job, vars: { FAIL_AT: 0, FACTOR: 1 } }));
    assert.equal(ok.status, 'success', JSON.stringify(ok));
    const before = await targetState(table);
    assert.deepEqual(before, { n: 100_000, sum: 5_000_050_000, leftovers: 0 });
    const bad = await finished(a, await run(a, { job_id: job, vars: { FAIL_AT: 90000, FACTOR: 2 } }));
    assert.equal(bad.status, 'error');
    assert.match(bad.error, new RegExp(`^${table}: .*division by zero`));
    assert.deepEqual(await targetState(table), before, `${mode}: the target is as before the failed run`);
  }
});

test('row 20 with a replication: cancel stops pg_sleep and leaves the previous full-refresh table intact', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const job = await save(a, 'replications/slow.yaml', 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  slow:\n    sql: "select 1 as x from pg_sleep(${SLEEP})"\n    object: main.slow\n');
  assert.equal((await finished(a, await run(a, { job_id: job, vars: { SLEEP: 0 } }))).status, 'success');
  const execId = await run(a, { job_id: job, vars: { SLEEP: 60 } });
  await eventually(async () => ((await sleepers()) > 0 ? true : undefined), 20_000, 'pg_sleep(60) to start');
  const res = await a.request('POST', '/execution/cancel', { body: { exec_id: execId } });
  assert.deepEqual(res.body, { exec_id: execId, status: 'cancelled' });
  await eventually(async () => ((await sleepers()) === 0 ? true : undefined), 5_000, 'pg_sleep to stop');
  const done = await execution(a, execId);
  assert.deepEqual([done.status, done.error], ['cancelled', 'cancelled by request']);
  assert.deepEqual((await tasks(a, execId)).map((x) => x.status), ['cancelled']);
  await eventually(async () => (a.executions.runningCount === 0 ? true : undefined), 10_000, 'the execution to wind down');
  assert.deepEqual(await duckRows(lake(), 'select x from main.slow'), [[1]]);
});

const sleepers = () => fx.sleepers();

test('incremental file streams without keys read only files modified since the last successful run', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const old = new Date('2025-01-01T00:00:00Z');
  await writeFile(path.join(files, 'in', 'a.csv'), 'id,name\n1,one\n2,two\n');
  await utimes(path.join(files, 'in', 'a.csv'), old, old);
  const job = await save(a, 'replications/files.yaml', "source: FILES\ntarget: WAREHOUSE\nstreams:\n  in/:\n    object: tgt.from_files\n    mode: incremental\n");
  const first = await finished(a, await run(a, { job_id: job }));
  assert.deepEqual([first.status, first.rows], ['success', 2], JSON.stringify(first));
  await writeFile(path.join(files, 'in', 'b.csv'), 'id,name\n3,three\n');
  const second = await finished(a, await run(a, { job_id: job }));
  assert.deepEqual([second.status, second.rows], ['success', 1]);
  const third = await finished(a, await run(a, { job_id: job }));
  assert.deepEqual([third.status, third.rows], ['success', 0]);
  assert.deepEqual((await pgQuery(fx.db!.url, 'select id::int as id, name from tgt.from_files order by id')).map((r) => [r.id, r.name]), [[1, 'one'], [2, 'two'], [3, 'three']]);
});
