// Pipeline executions through the daemon's HTTP API on real PostgreSQL and
// DuckDB: the acceptance
// pipeline replication → build (state.transform.failed == 0 checked by a
// check step) → log, with its Step records, states, execution totals and
// `build`; loops and the step_id filter; command steps off by default;
// variables; cancel stops a running query step in the database.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { usePgDaemon } from './helpers/pg-daemon.js';
import { eventually, TIME, U, type ApiServer } from './helpers/api-server.js';

const fx = usePgDaemon('pipe_daemon', "create table public.users (id int primary key, name text); insert into public.users values (1, 'ada'), (2, 'bob'), (3, 'cy')");
const ready = (t: TestContext) => fx.ready(t);

const filters = (f: unknown) => `filters=${encodeURIComponent(JSON.stringify(f))}`;

async function save(a: ApiServer, name: string, body: string): Promise<any> {
  const res = await a.request('POST', '/project/file/save', { body: { file: { name, body } } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function execution(a: ApiServer, execId: string): Promise<any> {
  const res = await a.request('GET', `/execution/list?${filters({ exec_id: execId })}`);
  return res.body.executions[0];
}

async function finished(a: ApiServer, execId: string): Promise<any> {
  return eventually(async () => {
    const e = await execution(a, execId);
    return e.status === 'queued' || e.status === 'running' ? undefined : e;
  }, 30_000, `execution ${execId} to finish`);
}

async function run(a: ApiServer, jobId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await a.request('POST', '/project/job/run', { body: { job_id: jobId, ...extra } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.exec_id;
}

async function steps(a: ApiServer, execId: string, extra: Record<string, unknown> = {}): Promise<any[]> {
  const res = await a.request('POST', '/execution/pipeline-steps', { body: { exec_id: execId, ...extra } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.steps;
}

const MODELS = {
  'models/service_build.yml': 'target: LAKE\n',
  'models/marts/user_stats.sql': '/**\nmode: full-refresh\nhooks: {end: [{type: set, key: built, value: "{model.full_name}"}]}\n**/\nselect count(*) as users, max(id) as max_id from main.users\n',
};

const ACCEPTANCE = [
  'env:',
  "  GREETING: '${GREETING}'",
  'steps:',
  '  - id: load',
  '    type: replication',
  '    path: replications/users.yaml',
  '  - id: transform',
  '    build: models',
  '    prod: true',
  '  - check: state.transform.failed == 0',
  "    failure_message: 'build failed for {state.transform.failed} models'",
  "  - log: '{env.GREETING}: {state.load.rows} rows, built {store.built}'",
  '',
].join('\n');

test('acceptance: replication → build → check → log through the daemon: step records, states, totals, build', async (t) => {
  const a = await ready(t);
  if (!a) return;
  await save(a, 'replications/users.yaml', U);
  for (const [name, body] of Object.entries(MODELS)) await save(a, name, body);
  const saved = await save(a, 'pipelines/daily.yaml', ACCEPTANCE);
  assert.equal(saved.job_file_kind, 'pipeline');
  const execId = await run(a, saved.default_job_id, { vars: { GREETING: 'hello' } });
  const e = await finished(a, execId);
  assert.equal(e.status, 'success', e.error);
  assert.equal(e.error, null);
  assert.equal(e.job_type, 'pipeline');
  assert.deepEqual(e.status_map, { queued: 0, running: 0, success: 4, error: 0, warning: 0, skipped: 0, cancelled: 0, interrupted: 0 });

  const list = await steps(a, execId, { exclude_output: true });
  assert.deepEqual(list.map((s) => [s.step_id, s.type, s.status, s.error]), [
    ['load', 'replication', 'success', null],
    ['transform', 'build', 'success', null],
    ['step_3', 'check', 'success', null],
    ['step_4', 'log', 'success', null],
  ]);
  for (const s of list) {
    assert.equal(s.exec_id, execId);
    assert.match(s.start_time, TIME);
    assert.match(s.end_time, TIME);
    assert.equal('output' in s, false);
  }
  const [load, transform, check, log] = list;
  assert.equal(load.state.status, 'success');
  assert.equal(load.state.rows, 3);
  assert.deepEqual(load.state.tasks.map((x: any) => [x.stream_name, x.object, x.status, x.rows, x.error]), [['public.users', 'main.users', 'success', 3, null]]);
  assert.deepEqual(Object.keys(transform.state), ['path', 'target', 'command', 'results', 'total', 'ok', 'failed', 'skipped', 'rows', 'bytes', 'ok_names']);
  assert.equal(transform.state.path, `${a.acme.root}/models`);
  assert.deepEqual([transform.state.target, transform.state.command, transform.state.total, transform.state.ok, transform.state.failed, transform.state.ok_names], ['LAKE', 'run', 1, 1, 0, 'marts.user_stats']);
  assert.deepEqual(transform.state.results.map((r: any) => [r.name, r.type, r.mode, r.status, r.rows]), [['marts.user_stats', 'model', 'full-refresh', 'success', 1]]);
  assert.deepEqual(check.state, { result: true });
  assert.deepEqual(log.state, { message: 'hello: 3 rows, built marts.user_stats' });
  // Execution totals over replication and build steps; `build` is the last build step's run output object.
  assert.equal(e.rows, 3 + 1);
  assert.equal(e.bytes, load.state.bytes + transform.state.bytes);
  assert.deepEqual(e.build, transform.state);

  const withOutput = await steps(a, execId, { step_id: 'step_4' });
  assert.equal(withOutput.length, 1);
  assert.equal(withOutput[0].output, 'hello: 3 rows, built marts.user_stats\n');
  const buildOut = (await steps(a, execId, { step_id: 'transform' }))[0].output as string;
  assert.match(buildOut, /INF \[1\/1\] marts\.user_stats \(full-refresh\) OK/);

  // The build really wrote to LAKE: a query step reads it back.
  const verify = await save(a, 'pipelines/verify.yaml', "steps:\n  - {id: q, type: query, connection: LAKE, query: 'select users, max_id from marts.user_stats'}\n");
  const v = await finished(a, await run(a, verify.default_job_id));
  assert.equal(v.status, 'success', v.error);
  assert.deepEqual((await steps(a, v.exec_id))[0].state, { columns: ['users', 'max_id'], rows: [{ users: 3, max_id: 3 }], row_count: 1 });
});

test('a failing check aborts with the failed status and the check error text; steps never reached have no record; unresolved ${NAME}', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const saved = await save(a, 'pipelines/fails.yaml', [
    'env: {MISSING: "${NOPE_NOT_SET}"}',
    'steps:',
    "  - {id: w, log: '{env.MISSING}', on_failure: warn}",
    "  - {id: c, check: 'store.x == 1', failure_message: 'x is {coalesce(store.x, \"unset\")}'}",
    '  - log: never',
    '',
  ].join('\n'));
  const e = await finished(a, await run(a, saved.default_job_id));
  assert.equal(e.status, 'error');
  assert.equal(e.error, 'c: x is unset');
  assert.deepEqual(e.status_map, { queued: 0, running: 0, success: 0, error: 1, warning: 1, skipped: 0, cancelled: 0, interrupted: 0 });
  const list = await steps(a, e.exec_id);
  assert.deepEqual(list.map((s) => [s.step_id, s.status, s.error]), [['w', 'warning', 'variable NOPE_NOT_SET is not set'], ['c', 'error', 'x is unset']]);
  assert.match(list[1].output, /error: x is unset\n$/);
  assert.equal(e.build, null);
});

test('groups with loops: each.q[i] records, the step_id prefix filter, job vars, command steps disabled on this server', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const saved = await save(a, 'pipelines/loop.yaml', [
    'steps:',
    '  - id: each',
    '    type: group',
    "    loop: 'split(env.IDS, \",\")'",
    '    concurrency: 2',
    '    steps:',
    "      - {id: q, type: query, connection: WAREHOUSE, query: 'select name from public.users where id = {loop.value}'}",
    "      - {type: set, key: 'u{loop.value}', value: '{state.q.rows[0].name}'}",
    "  - {id: names, log: '{store.u1},{store.u3}'}",
    "  - {id: cmd, command: 'echo hi', on_failure: quiet}",
    '',
  ].join('\n'));
  const jobRes = await a.request('GET', `/project/job/get?job_id=${saved.default_job_id}`);
  const job = jobRes.body;
  const input = { id: job.id, name: job.name, type: job.type, file_name: job.file_name, config: { vars: { IDS: '1,3' } } };
  const put = await a.request('POST', '/project/job/save', { body: { job: input } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const e = await finished(a, await run(a, saved.default_job_id));
  assert.equal(e.status, 'success', e.error);
  const all = await steps(a, e.exec_id, { exclude_output: true });
  assert.deepEqual(all.map((s) => s.step_id).sort(), ['cmd', 'each', 'each.q[0]', 'each.q[1]', 'each.step_2[0]', 'each.step_2[1]', 'names'].sort());
  assert.equal(all[0].step_id, 'each');
  const each = await steps(a, e.exec_id, { step_id: 'each', exclude_output: true });
  assert.deepEqual(each.map((s) => s.step_id).sort(), ['each', 'each.q[0]', 'each.q[1]', 'each.step_2[0]', 'each.step_2[1]']);
  assert.deepEqual(each.find((s) => s.step_id === 'each').state, { iterations: 2 });
  assert.deepEqual(all.find((s) => s.step_id === 'names').state, { message: 'ada,cy' });
  const cmd = all.find((s) => s.step_id === 'cmd');
  assert.deepEqual([cmd.status, cmd.error], ['error', 'command steps are disabled on this server']);
  assert.equal(e.rows, 0, 'query steps do not count');
});

test('cancel: a running pipeline query step is stopped in PostgreSQL; the step and the execution are cancelled', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const saved = await save(a, 'pipelines/slow.yaml', "steps:\n  - {id: slow, type: query, connection: WAREHOUSE, query: 'select pg_sleep(60)'}\n  - log: never\n");
  const execId = await run(a, saved.default_job_id);
  const sleepers = () => fx.sleepers();
  await eventually(async () => ((await sleepers()) > 0 ? true : undefined), 10_000, 'pg_sleep to start');
  const res = await a.request('POST', '/execution/cancel', { body: { exec_id: execId } });
  assert.deepEqual(res.body, { exec_id: execId, status: 'cancelled' });
  await eventually(async () => ((await sleepers()) === 0 ? true : undefined), 10_000, 'pg_sleep to be cancelled');
  const e = await execution(a, execId);
  assert.equal(e.status, 'cancelled');
  assert.equal(e.error, 'cancelled by request');
  const list = await eventually(async () => {
    const l = await steps(a, execId);
    return l.length === 1 && l[0].status === 'cancelled' ? l : undefined;
  }, 5_000, 'the step to be cancelled');
  assert.equal(list[0].step_id, 'slow');
});
