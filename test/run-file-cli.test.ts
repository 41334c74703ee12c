// `service run <file>` (the CLI part): job files run locally through
// the daemon's ExecutionService without a daemon. Connections from an
// env.yaml beside the file, ~/.service/env.yaml and URL-valued environment
// variables; progress on stderr; --json prints the Execution fields plus
// tasks (or steps); exit 0 for success or warning, 1 otherwise, 2 for usage.
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { duckSql } from './helpers/duck-file.js';
import { runMain, withEnv } from './helpers/cli-daemon.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';

let base = '';
let home = '';
let db: TempDatabase | undefined;

before(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'service-run-'));
  home = path.join(base, 'home');
  await mkdir(home);
  if (!(await pgAvailable())) return;
  db = await createTempDatabase('run_file');
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  await c.query(`create table public.orders (id int, amount numeric, updated_at timestamptz);
    insert into public.orders values (1, 2.5, now() - interval '3 days'), (2, 4, now() - interval '2 days')`);
  await c.end();
});

after(async () => {
  await db?.drop();
  await rm(base, { recursive: true, force: true });
});

/** A folder with the job file and an env.yaml beside it. */
async function project(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(base, name);
  await mkdir(dir, { recursive: true });
  for (const [file, body] of Object.entries(files)) await writeFile(path.join(dir, file), body);
  return dir;
}

/** `service run` with the temp home as ~/.service and no stray URL variables. */
const serviceRun = (argv: string[], env: Record<string, string | undefined> = {}) => withEnv({ SERVICE_HOME_DIR: home, ...env }, () => runMain(['run', ...argv]));

const EXECUTION_KEYS = ['exec_id', 'job_id', 'job_name', 'job_type', 'file_name', 'status', 'error', 'trigger', 'start_time', 'end_time', 'duration', 'rows', 'bytes', 'status_map', 'build'];
const TASK_KEYS = ['exec_id', 'task_id', 'stream_name', 'object', 'mode', 'status', 'error', 'start_time', 'end_time', 'rows', 'bytes', 'output', 'metrics'];

async function withPg(t: TestContext): Promise<boolean> {
  return requirePg(t);
}

test('a monitor file breaching freshness: text progress on stderr, summary on stdout, exit 0 for warning', async (t) => {
  if (!(await withPg(t))) return;
  const dir = await project('mon', {
    'env.yaml': `connections:\n  WAREHOUSE:\n    url: ${db!.url}\n`,
    'orders.yaml': 'connection: WAREHOUSE\nobjects:\n  public.orders:\n    freshness_column: updated_at\n    freshness_threshold: 1d\n    columns:\n      amount: [min_max]\n',
  });
  const r = await serviceRun([path.join(dir, 'orders.yaml')]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /INF execution \S+ running/);
  assert.match(r.err, /\[public\.orders\] row_count: 2\n/);
  assert.match(r.err, /\[public\.orders\] event data_stale: public\.orders: max\(updated_at\) = \S+ is 2d\S* old \(\d+(\.\d+)? s\), over the freshness_threshold 1d \(86400 s\)\n/);
  assert.match(r.err, /\[public\.orders\] warning: data_stale: public\.orders: /);
  assert.match(r.out, /^Execution \S{27} warning: rows=2 bytes=0 duration=[\d.]+s\n {2}public\.orders {2}warning {2}rows=2 {2}data_stale: public\.orders: max\(updated_at\)/);
});

test('--json prints one object: the Execution fields plus tasks with metrics', async (t) => {
  if (!(await withPg(t))) return;
  const dir = path.join(base, 'mon');
  const r = await serviceRun(['--json', path.join(dir, 'orders.yaml')]);
  assert.equal(r.code, 0, r.err);
  const body = JSON.parse(r.out);
  assert.deepEqual(Object.keys(body), [...EXECUTION_KEYS, 'tasks']);
  assert.deepEqual([body.job_name, body.job_type, body.file_name, body.status, body.error, body.trigger, body.rows], ['orders', 'monitor', 'orders.yaml', 'warning', null, 'manual', 2]);
  assert.deepEqual(body.status_map, { queued: 0, running: 0, success: 0, error: 0, warning: 1, skipped: 0, cancelled: 0, interrupted: 0 });
  assert.equal(body.tasks.length, 1);
  const task = body.tasks[0];
  assert.deepEqual(Object.keys(task), TASK_KEYS);
  assert.deepEqual([task.task_id, task.stream_name, task.mode, task.status], ['task_1', 'public.orders', 'monitor', 'warning']);
  assert.deepEqual(task.metrics.columns, { amount: { min: 2.5, max: 4 } });
  assert.deepEqual(task.metrics.events.map((e: any) => e.type), ['data_stale']);
  assert.match(task.output, /^measuring public\.orders\n/);
  assert.equal(r.out.trim().split('\n').length, 1, 'one JSON value on stdout');
});

test('a query file on a DuckDB connection from the env.yaml beside it; a failing one exits 1', async () => {
  const dir = await project('duck', {
    'env.yaml': 'connections:\n  LAKE:\n    type: duckdb\n    instance: lake.duckdb\n',
    'load.sql': '-- connection: LAKE\ncreate table t as select * from range(5) r(i);\nselect count(*) as n from t;\n',
    'bad.sql': '-- connection: LAKE\nselect * from missing_table;\n',
  });
  const ok = await serviceRun(['--json', path.join(dir, 'load.sql')]);
  assert.equal(ok.code, 0, ok.err);
  const body = JSON.parse(ok.out);
  assert.deepEqual([body.job_type, body.status, body.rows], ['query', 'success', 6]);
  assert.deepEqual([body.tasks[0].stream_name, body.tasks[0].object, body.tasks[0].mode, body.tasks[0].metrics], ['load.sql', 'LAKE', 'query', null]);
  assert.match(ok.err, /\[load\.sql\] statement 2\/2: 1 row\(s\)\n/);

  const counted = await duckSql<unknown[][]>(path.join(dir, 'lake.duckdb'), 'select count(*) from t', 'rows');
  assert.equal(Number(counted[0]![0]), 5, 'the run wrote to the DuckDB file and released it');

  const bad = await serviceRun([path.join(dir, 'bad.sql')]);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /^Execution \S+ error: /);
  assert.match(bad.out, /\nerror: bad\.sql: statement 1 failed/);
});

test('connections also come from ~/.service/env.yaml and URL-valued environment variables', async (t) => {
  if (!(await withPg(t))) return;
  await writeFile(path.join(home, 'env.yaml'), `connections:\n  HOSTPG:\n    url: ${db!.url}\n`);
  try {
    const dir = await project('sources', {
      'host.sql': '-- connection: HOSTPG\nselect * from public.orders;\n',
      'envvar.sql': '-- connection: VARPG\nselect 1 as one;\n',
    });
    const host = await serviceRun(['--json', path.join(dir, 'host.sql')]);
    assert.equal(host.code, 0, host.err);
    assert.deepEqual([JSON.parse(host.out).status, JSON.parse(host.out).rows], ['success', 2]);
    const envvar = await serviceRun(['--json', path.join(dir, 'envvar.sql')], { VARPG: db!.url });
    assert.equal(envvar.code, 0, envvar.err);
    assert.equal(JSON.parse(envvar.out).tasks[0].object, 'VARPG');
    const missing = await serviceRun(['--json', path.join(dir, 'envvar.sql')], { VARPG: undefined });
    assert.equal(missing.code, 1);
    assert.deepEqual([JSON.parse(missing.out).status, JSON.parse(missing.out).error], ['error', 'envvar.sql: connection VARPG not found']);
  } finally {
    await rm(path.join(home, 'env.yaml'), { force: true });
  }
});

test('usage and file errors: exit 2 for usage, 1 for a missing, plain or invalid file', async () => {
  const dir = await project('errors', {
    'notes.txt': 'hello\n',
    'bad.yaml': 'connection: W\nobjects:\n  public.orders:\n    freshness_column: ts\n    freshness_threshold: soon\n',
  });
  const none = await serviceRun([]);
  assert.deepEqual([none.code, none.err], [2, "error: service run needs FILE\nRun 'service run --help' for usage.\n"]);
  assert.equal((await serviceRun(['a.yaml', '--bogus'])).code, 2);
  assert.equal((await serviceRun(['a.yaml', 'b.yaml'])).code, 2);
  const help = await serviceRun(['--help']);
  assert.deepEqual([help.code, help.out.startsWith('Usage: service run <FILE>')], [0, true]);
  const missing = await serviceRun([path.join(dir, 'nope.yaml')]);
  assert.deepEqual([missing.code, missing.err], [1, `fatal: job file ${JSON.stringify(path.join(dir, 'nope.yaml'))} does not exist\n`]);
  const plain = await serviceRun([path.join(dir, 'notes.txt')]);
  assert.equal(plain.code, 1);
  assert.match(plain.err, /is not a job file/);
  const invalid = await serviceRun([path.join(dir, 'bad.yaml')]);
  assert.equal(invalid.code, 1);
  assert.equal(
    invalid.err,
    `${path.join(dir, 'bad.yaml')}:5:26: objects["public.orders"].freshness_threshold: invalid duration "soon"\nfatal: invalid job file ${path.join(dir, 'bad.yaml')}\n`,
  );
  assert.equal(invalid.out, '');
});

test('a pipeline file runs with project files resolved against its folder; --json carries steps', async () => {
  const dir = await project('pipe', {
    'env.yaml': 'connections:\n  LAKE:\n    type: duckdb\n    instance: pipe.duckdb\n',
    'p.yaml': 'steps:\n  - id: hello\n    type: log\n    message: hi\n  - id: q\n    type: query\n    connection: LAKE\n    query: file://sql/answer.sql\n',
  });
  await mkdir(path.join(dir, 'sql'));
  await writeFile(path.join(dir, 'sql', 'answer.sql'), 'select 42 as answer\n');
  const r = await serviceRun(['--json', path.join(dir, 'p.yaml')]);
  assert.equal(r.code, 0, r.err);
  const body = JSON.parse(r.out);
  assert.deepEqual(Object.keys(body), [...EXECUTION_KEYS, 'steps']);
  assert.deepEqual([body.status, body.job_type], ['success', 'pipeline']);
  assert.deepEqual(body.steps.map((s: any) => [s.step_id, s.type, s.status]), [['hello', 'log', 'success'], ['q', 'query', 'success']]);
  assert.match(JSON.stringify(body.steps[1].state), /42/);
  assert.match(r.err, /\[hello\] hi\n/);
});

test('a replication file with a file:// stream query runs between two DuckDB files', async () => {
  const dir = await project('repl', {
    'env.yaml': 'connections:\n  SRC:\n    type: duckdb\n    instance: src.duckdb\n  DST:\n    type: duckdb\n    instance: dst.duckdb\n',
    'r.yaml': 'source: SRC\ntarget: DST\nstreams:\n  answer:\n    sql: file://sql/answer.sql\n    object: main.answer\n',
  });
  await mkdir(path.join(dir, 'sql'));
  await writeFile(path.join(dir, 'sql', 'answer.sql'), 'select 42 as answer\n');
  const r = await serviceRun(['--json', path.join(dir, 'r.yaml')]);
  assert.equal(r.code, 0, r.err);
  const body = JSON.parse(r.out);
  assert.deepEqual(Object.keys(body), [...EXECUTION_KEYS, 'tasks']);
  assert.deepEqual([body.job_type, body.status, body.rows], ['replication', 'success', 1]);
  assert.deepEqual(body.tasks.map((x: any) => [x.stream_name, x.object, x.status, x.rows]), [['answer', 'main.answer', 'success', 1]]);
  const answers = await duckSql<unknown[][]>(path.join(dir, 'dst.duckdb'), 'select answer from main.answer', 'rows');
  assert.deepEqual(answers.map((row) => Number(row[0])), [42]);
});
