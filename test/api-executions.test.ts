// Executions through the HTTP API on real PostgreSQL (/execution/list to /execution/pipeline-steps,
// Rows 5, 17–24): a query job on the WAREHOUSE connection
// runs to success, policy skip records a skipped run, cancel stops the
// statement in the database, and the list / tasks / steps endpoints with
// every parameter rule. (Rows 17, 19 and 20 use a query job: replication
// jobs cannot run yet.)
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { usePgDaemon } from './helpers/pg-daemon.js';
import { eventually, EXEC_ID, TIME, type ApiServer } from './helpers/api-server.js';

const fx = usePgDaemon('api_exec', "create table public.users (id int primary key, name text); insert into public.users values (1, 'ada'), (2, 'bob'), (3, 'cy')");
const ready = (t: TestContext) => fx.ready(t);
/** Shared between the ordered scenarios,. */
const state: { usersExec?: string; slowJob?: string; slowFirst?: string } = {};

const bad = (error: string) => ({ error, code: 'bad_request' });
const filters = (f: unknown) => `filters=${encodeURIComponent(JSON.stringify(f))}`;

async function getExecution(a: ApiServer, execId: string, token?: string): Promise<any> {
  const res = await a.request('GET', `/execution/list?${filters({ exec_id: execId })}`, token ? { token } : {});
  assert.equal(res.status, 200);
  return res.body.executions[0];
}

async function finished(a: ApiServer, execId: string): Promise<any> {
  return eventually(async () => {
    const e = await getExecution(a, execId);
    return e.status === 'queued' || e.status === 'running' ? undefined : e;
  }, 30_000, `execution ${execId} to finish`);
}

async function saveFile(a: ApiServer, name: string, body: string): Promise<any> {
  const res = await a.request('POST', '/project/file/save', { body: { file: { name, body } } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

const sleepers = () => fx.sleepers();

test('row 5: WAREHOUSE tests valid', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const res = await a.request('POST', '/connection/test', { body: { name: 'WAREHOUSE' } });
  assert.deepEqual(res.body, { valid: true });
});

test('row 17: a query job on WAREHOUSE runs to success with 3 rows', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const saved = await saveFile(a, 'queries/users.sql', '-- connection: WAREHOUSE\nselect * from users\n');
  const res = await a.request('POST', '/project/job/run', { body: { job_id: saved.default_job_id } });
  assert.equal(res.status, 200);
  assert.match(res.body.exec_id, EXEC_ID);
  state.usersExec = res.body.exec_id;
  const first = await getExecution(a, res.body.exec_id);
  assert.deepEqual([first.trigger, first.job_name, first.job_id], ['api', 'users', saved.default_job_id]);
  const done = await finished(a, res.body.exec_id);
  assert.equal(done.status, 'success', JSON.stringify(done));
  assert.deepEqual(Object.keys(done), ['exec_id', 'job_id', 'job_name', 'job_type', 'file_name', 'status', 'error', 'trigger', 'start_time', 'end_time', 'duration', 'rows', 'bytes', 'status_map', 'build']);
  assert.equal(done.rows, 3);
  assert.deepEqual(done.status_map, { queued: 0, running: 0, success: 1, error: 0, warning: 0, skipped: 0, cancelled: 0, interrupted: 0 });
  assert.match(done.end_time, TIME);
  assert.ok(done.duration >= 0);
  assert.deepEqual([done.error, done.build, done.job_type, done.file_name], [null, null, 'query', 'queries/users.sql']);
});

test('row 18: another project sees no execution and cannot cancel it', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const list = await a.request('GET', `/execution/list?${filters({ exec_id: state.usersExec })}`, { token: a.beta.token });
  assert.equal(list.status, 200);
  assert.deepEqual(list.body, { executions: [] });
  const all = await a.request('GET', '/execution/list', { token: a.beta.token });
  assert.deepEqual(all.body, { executions: [] });
  for (const p of ['/execution/cancel', '/execution/replication-tasks', '/execution/pipeline-steps']) {
    const res = await a.request('POST', p, { body: { exec_id: state.usersExec }, token: a.beta.token });
    assert.equal(res.status, 404, p);
    assert.deepEqual(res.body, { error: `execution ${state.usersExec} not found`, code: 'not_found' });
  }
});

test('row 19: with policy skip a second run while one is active is recorded skipped', async (t) => {
  const a = await ready(t);
  if (!a) return;
  await saveFile(a, 'queries/slow.sql', '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60)\n');
  const job = await a.request('POST', '/project/job/save', { body: { job: { name: 'slow', type: 'query', file_name: 'queries/slow.sql', policy: 'skip' } } });
  assert.equal(job.status, 200);
  state.slowJob = job.body.id;
  const first = await a.request('POST', '/project/job/run', { body: { job_id: state.slowJob } });
  const second = await a.request('POST', '/project/job/run', { body: { job_id: state.slowJob } });
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  assert.notEqual(first.body.exec_id, second.body.exec_id);
  state.slowFirst = first.body.exec_id;
  const skipped = await getExecution(a, second.body.exec_id);
  assert.equal(skipped.status, 'skipped');
  assert.equal(skipped.error, `job ${state.slowJob} already has an active execution ${first.body.exec_id}`);
  assert.equal(skipped.duration, 0);
  assert.equal(skipped.start_time, skipped.end_time);
});

test('row 20: cancelling the running execution stops its statement in PostgreSQL', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const execId = state.slowFirst!;
  await eventually(async () => ((await sleepers()) > 0 ? true : undefined), 20_000, 'pg_sleep to start');
  assert.equal((await getExecution(a, execId)).status, 'running');
  const res = await a.request('POST', '/execution/cancel', { body: { exec_id: execId } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { exec_id: execId, status: 'cancelled' });
  const rec = await getExecution(a, execId);
  assert.deepEqual([rec.status, rec.error], ['cancelled', 'cancelled by request']);
  assert.match(rec.end_time, TIME);
  const tasks = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: execId, exclude_output: true } });
  assert.deepEqual(tasks.body.tasks.map((x: any) => [x.task_id, x.status]), [['task_1', 'cancelled']]);
  await eventually(async () => ((await sleepers()) === 0 ? true : undefined), 5_000, 'pg_sleep(60) to leave pg_stat_activity');
});

test('cancel: a queued execution is cancelled at once and never starts', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const job = await a.request('POST', '/project/job/save', { body: { job: { name: 'slow queue', type: 'query', file_name: 'queries/slow.sql' } } });
  const running = (await a.request('POST', '/project/job/run', { body: { job_id: job.body.id } })).body.exec_id;
  const queued = (await a.request('POST', '/project/job/run', { body: { job_id: job.body.id } })).body.exec_id;
  assert.equal((await getExecution(a, queued)).status, 'queued');
  const res = await a.request('POST', '/execution/cancel', { body: { exec_id: queued } });
  assert.deepEqual(res.body, { exec_id: queued, status: 'cancelled' });
  const rec = await getExecution(a, queued);
  assert.deepEqual([rec.status, rec.error, rec.status_map.running, rec.status_map.success], ['cancelled', 'cancelled by request', 0, 0]);
  assert.equal((await a.request('POST', '/execution/cancel', { body: { exec_id: running } })).status, 200);
  assert.equal((await finished(a, running)).status, 'cancelled');
});

test('row 21: cancelling a finished execution is 409 with its status', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const res = await a.request('POST', '/execution/cancel', { body: { exec_id: state.usersExec } });
  assert.equal(res.status, 409);
  assert.deepEqual(res.body, { error: `execution ${state.usersExec} is not running or queued (status: success)`, code: 'conflict' });
  const unknown = await a.request('POST', '/execution/cancel', { body: { exec_id: '2p0000000000000000000000000' } });
  assert.deepEqual(unknown.body, { error: 'execution 2p0000000000000000000000000 not found', code: 'not_found' });
});

test('row 22: limit outside 1–100 or not an integer is 400', async (t) => {
  const a = await ready(t);
  if (!a) return;
  for (const limit of ['101', '0', 'abc', '-1', '1.5', '']) {
    const res = await a.request('GET', `/execution/list?limit=${limit}`);
    assert.equal(res.status, 400, limit);
    assert.deepEqual(res.body, bad('limit must be an integer between 1 and 100'));
  }
  const one = await a.request('GET', '/execution/list?limit=1');
  assert.equal(one.body.executions.length, 1);
  const hundred = await a.request('GET', '/execution/list?limit=100');
  assert.ok(hundred.body.executions.length >= 5);
});

test('row 23: malformed filters, unknown filter keys, and an unknown exec id (empty list)', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const cases: [string, string][] = [
    ['filters=%7Bexec_id%3A', 'filters must be a URL-encoded JSON object'],
    [filters([1]), 'filters must be a URL-encoded JSON object'],
    [filters('x'), 'filters must be a URL-encoded JSON object'],
    ['filters=%7B%22job%22%3A%22x%22%7D', 'unknown filter key "job"'],
    [filters({ job_id: 7 }), 'filters.job_id must be a string'],
    [filters({ exec_id: ['x'] }), 'filters.exec_id must be a string'],
    [filters({ status: 'done' }), 'status must be one of queued, running, success, error, warning, skipped, cancelled, interrupted'],
    [filters({ period: '2025-01-01T00:00:00Z' }), 'filters.period must be two RFC 3339 timestamps in order'],
    [filters({ period: ['2025-01-02T00:00:00Z', '2025-01-01T00:00:00Z'] }), 'filters.period must be two RFC 3339 timestamps in order'],
    [filters({ period: ['2025-02-30T00:00:00Z', '2025-03-01T00:00:00Z'] }), 'filters.period must be two RFC 3339 timestamps in order'],
    [filters({ period: ['yesterday', 'today'] }), 'filters.period must be two RFC 3339 timestamps in order'],
    ['status=finished', 'status must be one of queued, running, success, error, warning, skipped, cancelled, interrupted'],
    ['order=newest', 'order must be asc or desc'],
  ];
  for (const [q, error] of cases) {
    const res = await a.request('GET', `/execution/list?${q}`);
    assert.equal(res.status, 400, q);
    assert.deepEqual(res.body, bad(error));
  }
  const unknown = await a.request('GET', `/execution/list?${filters({ exec_id: '2p0000000000000000000000000' })}`);
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body, { executions: [] });
});

test('list: status, job_id, period and order filters combine with AND; newest first by default', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const all = (await a.request('GET', '/execution/list?limit=100')).body.executions as any[];
  const keys = all.map((e) => `${e.start_time} ${e.exec_id}`);
  assert.deepEqual(keys, [...keys].sort().reverse());
  const asc = (await a.request('GET', '/execution/list?limit=100&order=asc')).body.executions as any[];
  assert.deepEqual(asc.map((e) => e.exec_id), all.map((e) => e.exec_id).reverse());
  const slow = (await a.request('GET', `/execution/list?${filters({ job_id: state.slowJob })}`)).body.executions as any[];
  assert.deepEqual(slow.map((e) => e.status).sort(), ['cancelled', 'skipped']);
  const skipped = (await a.request('GET', `/execution/list?status=skipped&${filters({ job_id: state.slowJob })}`)).body.executions as any[];
  assert.equal(skipped.length, 1);
  const contradiction = await a.request('GET', `/execution/list?status=skipped&${filters({ status: 'success' })}`);
  assert.deepEqual(contradiction.body, { executions: [] });
  const first = asc[0];
  // start ≤ start_time < end; inputs may use any RFC 3339 offset.
  const inBerlinSummer = (iso: string) => new Date(Date.parse(iso) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
  const from = (await a.request('GET', `/execution/list?order=asc&limit=1&${filters({ period: [inBerlinSummer(first.start_time), '2999-01-01T00:00:00Z'] })}`)).body.executions;
  assert.deepEqual(from.map((e: any) => e.exec_id), [first.exec_id]);
  const exact = (await a.request('GET', `/execution/list?order=asc&${filters({ period: [first.start_time, first.start_time] })}`)).body.executions;
  assert.deepEqual(exact, [], 'the end of a period is exclusive');
  const window = (await a.request('GET', `/execution/list?order=asc&limit=100&${filters({ period: [first.start_time, '2999-01-01T00:00:00Z'] })}`)).body.executions as any[];
  assert.equal(window.length, asc.length);
  const future = (await a.request('GET', `/execution/list?${filters({ period: ['2999-01-01T00:00:00+02:00', '2999-01-02T00:00:00Z'] })}`)).body.executions;
  assert.deepEqual(future, []);
});

test('row 24: task records with and without output; a non-pipeline execution has no steps', async (t) => {
  const a = await ready(t);
  if (!a) return;
  const without = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: state.usersExec, exclude_output: true } });
  assert.equal(without.status, 200);
  assert.equal(without.body.tasks.length, 1);
  const task = without.body.tasks[0];
  assert.deepEqual(Object.keys(task), ['exec_id', 'task_id', 'stream_name', 'object', 'mode', 'status', 'error', 'start_time', 'end_time', 'rows', 'bytes', 'metrics']);
  assert.deepEqual([task.task_id, task.stream_name, task.object, task.mode, task.status, task.rows], ['task_1', 'queries/users.sql', 'WAREHOUSE', 'query', 'success', 3]);
  const withOutput = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: state.usersExec } });
  assert.equal(typeof withOutput.body.tasks[0].output, 'string');
  assert.ok(withOutput.body.tasks[0].output.length > 0);
  assert.match(withOutput.body.tasks[0].output, /ada/);
  const steps = await a.request('POST', '/execution/pipeline-steps', { body: { exec_id: state.usersExec } });
  assert.equal(steps.status, 400);
  assert.deepEqual(steps.body, bad(`execution ${state.usersExec} is not a pipeline execution; use /execution/replication-tasks`));
  // Filters on tasks.
  const byStatus = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: state.usersExec, status: 'error', exclude_output: true } });
  assert.deepEqual(byStatus.body, { tasks: [] });
  const byStream = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: state.usersExec, stream: 'queries/users.sql', exclude_output: true } });
  assert.equal(byStream.body.tasks.length, 1);
  const badStatus = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: state.usersExec, status: 'ok' } });
  assert.deepEqual(badStatus.body, bad('status must be one of queued, running, success, error, warning, skipped, cancelled, interrupted'));
  const unknown = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: '2p0000000000000000000000000' } });
  assert.deepEqual(unknown.body, { error: 'execution 2p0000000000000000000000000 not found', code: 'not_found' });
});

test('pipeline steps: start order, step_id prefix on "." and "[", exclude_output; tasks refuse a pipeline', async (t) => {
  const a = await ready(t);
  if (!a) return;
  // Pipelines cannot run yet: their records are written as the runner will write them.
  const now = new Date().toISOString();
  const exec = await a.store.createExecution({ project_id: a.acme.id, job_id: 'job_pppppppppppppppp', job_name: 'daily', job_type: 'pipeline', file_name: 'pipelines/daily.yaml', trigger: 'schedule', start_time: now });
  for (const [id, type] of [['load', 'replication'], ['each', 'group'], ['each.q[0]', 'query'], ['each.q[1]', 'query'], ['eachother', 'log']] as const) {
    await a.store.upsertStep({ exec_id: exec.exec_id, step_id: id, type, status: 'success', start_time: now, end_time: now, state: { id } });
    await a.store.appendStepOutput(exec.exec_id, id, `${id} done\n`);
  }
  const all = await a.request('POST', '/execution/pipeline-steps', { body: { exec_id: exec.exec_id } });
  assert.deepEqual(all.body.steps.map((s: any) => s.step_id), ['load', 'each', 'each.q[0]', 'each.q[1]', 'eachother']);
  assert.deepEqual(all.body.steps[0], { exec_id: exec.exec_id, step_id: 'load', type: 'replication', status: 'success', error: null, start_time: now, end_time: now, output: 'load done\n', state: { id: 'load' } });
  const each = await a.request('POST', '/execution/pipeline-steps', { body: { exec_id: exec.exec_id, step_id: 'each', exclude_output: true } });
  assert.deepEqual(each.body.steps.map((s: any) => s.step_id), ['each', 'each.q[0]', 'each.q[1]']);
  assert.ok(each.body.steps.every((s: any) => !('output' in s)));
  const q = await a.request('POST', '/execution/pipeline-steps', { body: { exec_id: exec.exec_id, step_id: 'each.q' } });
  assert.deepEqual(q.body.steps.map((s: any) => s.step_id), ['each.q[0]', 'each.q[1]']);
  const tasks = await a.request('POST', '/execution/replication-tasks', { body: { exec_id: exec.exec_id } });
  assert.deepEqual(tasks.body, bad(`execution ${exec.exec_id} is a pipeline execution; use /execution/pipeline-steps`));
  await a.store.updateExecution(exec.exec_id, { status: 'success', end_time: new Date().toISOString() });
});
