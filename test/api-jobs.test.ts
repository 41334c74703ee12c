// Jobs through the HTTP API (the Job resource, list, get, save, delete, run):
// the Job shape with `executed` and `next_run`, the save rules (cron,
// timezone, kinds, streams, ranges, default-job protections), full replace,
// list filters and order, delete, run requests with their override rules
// and trigger header, and isolation between projects.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, EXEC_ID, fixtureEnv, JOB_ID, startApiServer, TIME, U, type ApiServer } from './helpers/api-server.js';

let api: ApiServer;
let defaultJob: string;

const ALL = "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: 'main.{stream_table}'\nstreams:\n  public.*:\n  sales.orders:\n";
const bad = (error: string) => ({ error, code: 'bad_request' });

before(async () => {
  api = await startApiServer({ acmeEnv: fixtureEnv() });
  const files: [string, string][] = [
    ['replications/users.yaml', U],
    ['replications/all.yaml', ALL],
    ['queries/answer.sql', '-- connection: LAKE\nselect 42 as answer;\n'],
    ['pipelines/hello.yaml', "steps:\n  - id: hello\n    log: 'hi'\n"],
    ['models/stg.sql', 'select 1 as id\n'],
    ['pipelines/build.yaml', 'steps:\n  - id: transform\n    build: models\n'],
    ['monitors/users.yaml', 'connection: WAREHOUSE\nobjects:\n  public.users:\n'],
    ['notes.txt', 'plain'],
  ];
  for (const [name, body] of files) {
    const res = await api.request('POST', '/project/file/save', { body: { file: { name, body } } });
    assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
    if (name === 'replications/users.yaml') defaultJob = res.body.default_job_id;
  }
});

after(async () => {
  await api.close();
});

const saveJob = (job: Record<string, unknown>, token?: string) => api.request('POST', '/project/job/save', { body: { job }, ...(token ? { token } : {}) });
const run = (body: Record<string, unknown>, headers?: Record<string, string>) => api.request('POST', '/project/job/run', { body, ...(headers ? { headers } : {}) });
const base = { name: 'n', type: 'replication', file_name: 'replications/users.yaml' };

/** Wall-clock hour and minute of `iso` in `tz`. */
function localTime(iso: string, tz: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}

test('row 13: an invalid cron expression names its position', async () => {
  const res = await saveJob({ ...base, schedules: ['0 2 * * *', '61 * * * *'] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, bad('invalid cron expression "61 * * * *" in schedules[1]'));
  const first = await saveJob({ ...base, schedules: ['61 * * * *'] });
  assert.deepEqual(first.body, bad('invalid cron expression "61 * * * *" in schedules[0]'));
  const macro = await saveJob({ ...base, schedules: ['@daily'] });
  assert.deepEqual(macro.body, bad('invalid cron expression "@daily" in schedules[0]'));
});

test('row 14: the type must equal the kind of the file', async () => {
  const res = await saveJob({ ...base, type: 'pipeline' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, bad('type "pipeline" does not match the kind of file "replications/users.yaml" (replication)'));
});

test('row 15: a default job keeps its name, type and file, and is not deleted directly', async () => {
  const job = (await api.request('GET', `/project/job/get?job_id=${defaultJob}`)).body;
  const renamed = await saveJob({ ...job, name: 'renamed' });
  assert.equal(renamed.status, 403);
  assert.deepEqual(renamed.body, { error: 'the name, type and file_name of a default job cannot be changed', code: 'forbidden' });
  const del = await api.request('POST', '/project/job/delete', { body: { job_id: defaultJob } });
  assert.equal(del.status, 403);
  assert.deepEqual(del.body, { error: 'default jobs are deleted together with their file', code: 'forbidden' });
  // Every other field may change; `default` stays read-only.
  const edited = await saveJob({ ...job, active: true, schedules: ['*/5 * * * *'], description: 'edited', default: false });
  assert.equal(edited.status, 200);
  assert.deepEqual([edited.body.default, edited.body.active, edited.body.description], [true, true, 'edited']);
  assert.match(edited.body.next_run, TIME);
  const back = await saveJob({ ...edited.body, active: false, schedules: [], description: '' });
  assert.equal(back.body.next_run, null);
});

test('row 16: another project\'s job and file are 404 exactly like missing ones', async () => {
  const job = await api.request('GET', `/project/job/get?job_id=${defaultJob}`, { token: api.beta.token });
  assert.equal(job.status, 404);
  assert.deepEqual(job.body, { error: `job ${defaultJob} not found`, code: 'not_found' });
  const missing = await api.request('GET', '/project/job/get?job_id=job_aaaaaaaaaaaaaaaa');
  assert.deepEqual(missing.body, { error: 'job job_aaaaaaaaaaaaaaaa not found', code: 'not_found' });
  const file = await api.request('GET', '/project/file/get?name=replications%2Fusers.yaml', { token: api.beta.token });
  assert.deepEqual(file.body, { error: 'file "replications/users.yaml" not found', code: 'not_found' });
  for (const [p, body] of [
    ['/project/job/save', { job: { ...base, id: defaultJob } }],
    ['/project/job/delete', { job_id: defaultJob }],
    ['/project/job/run', { job_id: defaultJob }],
  ] as const) {
    const res = await api.request('POST', p, { body, token: api.beta.token });
    assert.equal(res.status, 404, p);
    assert.deepEqual(res.body, { error: `job ${defaultJob} not found`, code: 'not_found' });
  }
  // beta cannot point a job at acme's file either.
  const cross = await saveJob(base, api.beta.token);
  assert.deepEqual(cross.body, bad('file_name "replications/users.yaml" does not exist'));
});

test('create: every field in the response, config filled, next_run in the job timezone', async () => {
  const res = await saveJob({
    name: 'users nightly', type: 'replication', file_name: 'replications/users.yaml', active: true, schedules: ['0 2 * * *'],
    timezone: 'Europe/Berlin', policy: 'skip', config: { threads: 2, retries: 1 }, tags: ['crm'],
  });
  assert.equal(res.status, 200);
  const j = res.body;
  assert.match(j.id, JOB_ID);
  assert.deepEqual(j, {
    id: j.id, name: 'users nightly', type: 'replication', file_name: 'replications/users.yaml', description: '', active: true, default: false,
    streams: [], tags: ['crm'], schedules: ['0 2 * * *'], timezone: 'Europe/Berlin', policy: 'skip',
    config: { mode: null, threads: 2, vars: {}, timeout: 0, retries: 1 }, created: j.created, updated: j.updated, executed: null, next_run: j.next_run,
  });
  assert.equal(j.created, j.updated);
  assert.equal(localTime(j.next_run, 'Europe/Berlin'), '02:00');
  assert.ok(Date.parse(j.next_run) > Date.now() && Date.parse(j.next_run) <= Date.now() + 86_400_000);
  // Inactive: no next run.
  const inactive = await saveJob({ ...base, schedules: ['0 2 * * *'] });
  assert.equal(inactive.body.next_run, null);
});

test('replace: a get result saved back is accepted; omitted fields return to defaults; created is kept', async () => {
  const created = (await saveJob({ ...base, name: 'to replace', description: 'd', tags: ['a'], config: { mode: 'full-refresh', vars: { X: 1 } } })).body;
  const got = (await api.request('GET', `/project/job/get?job_id=${created.id}`)).body;
  const same = await saveJob(got);
  assert.equal(same.status, 200);
  assert.deepEqual({ ...same.body, updated: got.updated }, got);
  await new Promise((r) => setTimeout(r, 5));
  const replaced = await saveJob({ id: created.id, name: 'replaced', type: 'replication', file_name: 'replications/all.yaml', streams: ['public.orders'] });
  assert.equal(replaced.status, 200);
  assert.deepEqual(
    { ...replaced.body, updated: null },
    { ...created, name: 'replaced', file_name: 'replications/all.yaml', streams: ['public.orders'], description: '', tags: [], config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 }, updated: null },
  );
  assert.ok(replaced.body.updated > created.updated);
  const unknown = await saveJob({ ...base, id: 'job_zzzzzzzzzzzzzzzz' });
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, { error: 'job job_zzzzzzzzzzzzzzzz not found', code: 'not_found' });
});

test('save rules: files, streams, enums, ranges and vars each answer 400 with their message', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, file_name: 'replications/nope.yaml' }, 'file_name "replications/nope.yaml" does not exist'],
    [{ ...base, file_name: '../etc/passwd' }, 'file_name "../etc/passwd" does not exist'],
    [{ ...base, file_name: 'notes.txt' }, 'file "notes.txt" is not a job file'],
    [{ ...base, file_name: 'models' }, 'file_name "models" does not exist'],
    [{ ...base, type: 'query', file_name: 'queries/answer.sql', streams: ['a.b'] }, 'streams are only allowed for replication jobs'],
    [{ ...base, streams: ['public.orders'] }, 'stream "public.orders" is not in "replications/users.yaml"'],
    [{ ...base, file_name: 'replications/all.yaml', streams: ['sales.returns'] }, 'stream "sales.returns" is not in "replications/all.yaml"'],
    [{ ...base, timezone: 'Mars/Olympus' }, 'unknown timezone "Mars/Olympus"'],
    [{ ...base, policy: 'later' }, 'policy must be one of queue, skip, cancel'],
    [{ ...base, type: 'sync' }, 'type must be one of replication, pipeline, monitor, query'],
    [{ ...base, type: 'query', file_name: 'queries/answer.sql', config: { mode: 'full-refresh' } }, 'config.mode does not apply to query jobs'],
    [{ ...base, config: { mode: 'merge' } }, 'mode must be one of full-refresh, incremental, truncate, snapshot, backfill'],
    [{ ...base, config: { threads: 17 } }, 'field "job.config.threads" must be between 1 and 16'],
    [{ ...base, config: { threads: 0 } }, 'field "job.config.threads" must be between 1 and 16'],
    [{ ...base, config: { retries: 11 } }, 'field "job.config.retries" must be between 0 and 10'],
    [{ ...base, config: { timeout: -1 } }, 'field "job.config.timeout" must be between 0 and 2147483'],
    [{ ...base, config: { threads: 1.5 } }, 'field "job.config.threads" must be an integer'],
    [{ ...base, config: { thread: 2 } }, 'unknown field "job.config.thread"'],
    [{ ...base, config: { vars: ['x'] } }, 'field "job.config.vars" must be an object'],
    [{ ...base, config: { vars: { 'bad-name': 1 } } }, 'invalid variable name "bad-name" in job.config.vars'],
    [{ ...base, config: { vars: { X: { nested: true } } } }, 'field "job.config.vars.X" must be a string, a number or a boolean'],
    [{ ...base, name: '   ' }, 'field "job.name" must be 1 to 200 characters and not blank'],
    [{ ...base, name: 'x'.repeat(201) }, 'field "job.name" must be 1 to 200 characters and not blank'],
    [{ ...base, description: 'd'.repeat(2001) }, 'field "job.description" must be at most 2000 characters'],
    [{ ...base, tags: [''] }, 'field "job.tags[0]" must be 1 to 64 characters'],
    [{ ...base, schedules: Array.from({ length: 21 }, () => '0 * * * *') }, 'field "job.schedules" must have at most 20 entries'],
    [{ ...base, schedules: 'x' }, 'field "job.schedules" must be an array of strings'],
    [{ ...base, tags: [1] }, 'field "job.tags" must be an array of strings'],
    [{ name: 'n', type: 'replication' }, 'field "job.file_name" is required'],
  ];
  for (const [job, error] of cases) {
    const res = await saveJob(job);
    assert.equal(res.status, 400, error);
    assert.deepEqual(res.body, bad(error));
  }
  // Wildcard keys match the tables they stand for; free-form vars take any identifier.
  const ok = await saveJob({ ...base, file_name: 'replications/all.yaml', streams: ['public.orders', 'sales.orders'], config: { vars: { START: '2025-01-01', N: 3, FLAG: true } } });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body.config.vars, { START: '2025-01-01', N: 3, FLAG: true });
  // null means absent.
  const nulls = await saveJob({ ...base, description: null, config: { mode: null, threads: null } });
  assert.deepEqual([nulls.status, nulls.body.description, nulls.body.config.threads], [200, '', 1]);
});

test('list: exact-match filters combined with AND, sorted by created then id; type must be a kind', async () => {
  const all = (await api.request('POST', '/project/job/list', { body: {} })).body.jobs as any[];
  const keys = all.map((j) => `${j.created} ${j.id}`);
  assert.deepEqual(keys, [...keys].sort());
  assert.ok(all.length >= 7);
  const queries = (await api.request('POST', '/project/job/list', { body: { type: 'query' } })).body.jobs as any[];
  assert.deepEqual(queries.map((j) => j.file_name), ['queries/answer.sql']);
  const both = (await api.request('POST', '/project/job/list', { body: { name: 'users', file_name: 'replications/users.yaml' } })).body.jobs as any[];
  assert.deepEqual(both.map((j) => j.id), [defaultJob]);
  const none = (await api.request('POST', '/project/job/list', { body: { name: 'users', type: 'pipeline' } })).body.jobs;
  assert.deepEqual(none, []);
  const badType = await api.request('POST', '/project/job/list', { body: { type: 'sql' } });
  assert.deepEqual(badType.body, bad('type must be one of replication, pipeline, monitor, query'));
});

test('delete: a job without active executions goes, its executions stay; active ones make it 409', async () => {
  const job = (await saveJob({ ...base, name: 'short-lived' })).body;
  const exec = await api.store.createExecution({ project_id: api.acme.id, job_id: job.id, job_name: job.name, job_type: job.type, file_name: job.file_name, trigger: 'api', start_time: new Date().toISOString() });
  const got = (await api.request('GET', `/project/job/get?job_id=${job.id}`)).body;
  assert.equal(got.executed, exec.start_time);
  const busy = await api.request('POST', '/project/job/delete', { body: { job_id: job.id } });
  assert.equal(busy.status, 409);
  assert.deepEqual(busy.body, { error: `job ${job.id} has active executions`, code: 'conflict' });
  await api.store.updateExecution(exec.exec_id, { status: 'cancelled', error: 'cancelled by request', end_time: new Date().toISOString() });
  const res = await api.request('POST', '/project/job/delete', { body: { job_id: job.id } });
  assert.deepEqual(res.body, { job_id: job.id, deleted: true });
  assert.equal((await api.request('GET', `/project/job/get?job_id=${job.id}`)).status, 404);
  assert.equal((await api.request('POST', '/project/job/delete', { body: { job_id: job.id } })).status, 404);
  const list = await api.request('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ job_id: job.id }))}`);
  assert.deepEqual(list.body.executions.map((e: { exec_id: string }) => e.exec_id), [exec.exec_id]);
});

test('run: overrides that do not apply to the job type, bad values and a bad trigger header are 400', async () => {
  const jobs = (await api.request('POST', '/project/job/list', { body: {} })).body.jobs as any[];
  const byFile = (f: string) => jobs.find((j) => j.file_name === f && j.default).id as string;
  const cases: [Record<string, unknown>, string][] = [
    [{ job_id: byFile('queries/answer.sql'), streams: ['x.y'] }, 'streams does not apply to query jobs'],
    [{ job_id: byFile('monitors/users.yaml'), mode: 'full-refresh' }, 'mode does not apply to monitor jobs'],
    [{ job_id: byFile('replications/users.yaml'), select: ['stg'] }, 'select does not apply to replication jobs'],
    [{ job_id: byFile('pipelines/hello.yaml'), select: ['stg'] }, 'select does not apply to pipeline jobs without a build step'],
    [{ job_id: byFile('replications/users.yaml'), mode: 'merge' }, 'mode must be one of full-refresh, incremental, truncate, snapshot, backfill'],
    [{ job_id: byFile('replications/users.yaml'), streams: ['public.orders'] }, 'stream "public.orders" is not in "replications/users.yaml"'],
    [{ job_id: byFile('queries/answer.sql'), vars: { 'a-b': 1 } }, 'invalid variable name "a-b" in vars'],
    [{ job_id: byFile('queries/answer.sql'), vars: ['x'] }, 'field "vars" must be an object'],
    [{ job_id: byFile('queries/answer.sql'), wait: true }, 'unknown field "wait"'],
  ];
  for (const [body, error] of cases) {
    const res = await run(body);
    assert.equal(res.status, 400, error);
    assert.deepEqual(res.body, bad(error));
  }
  const header = await run({ job_id: byFile('queries/answer.sql') }, { 'Service-Trigger': 'cron' });
  assert.deepEqual(header.body, bad('header "Service-Trigger" must be "manual", got "cron"'));
  const unknown = await run({ job_id: 'job_0000000000000000' });
  assert.deepEqual(unknown.body, { error: 'job job_0000000000000000 not found', code: 'not_found' });
  // A pipeline with a build step takes `select`; every override is recorded for the execution.
  const ok = await run({ job_id: byFile('pipelines/build.yaml'), select: ['stg'], mode: 'full-refresh', vars: { A: 'b' } });
  assert.equal(ok.status, 200);
  const rec = await api.store.getExecution(api.acme.id, ok.body.exec_id);
  assert.deepEqual(rec?.overrides, { select: ['stg'], mode: 'full-refresh', vars: { A: 'b' } });
});

test('run: a missing or invalid job file is 409; the execution is not created', async () => {
  const before = (await api.store.projectCounts(api.acme.id)).executions;
  const gone = (await api.request('POST', '/project/file/save', { body: { file: { name: 'queries/gone.sql', body: '-- connection: LAKE\nselect 1\n' } } })).body;
  await rm(path.join(api.acme.root, 'queries', 'gone.sql'));
  const missing = await run({ job_id: gone.default_job_id });
  assert.equal(missing.status, 409);
  assert.deepEqual(missing.body, { error: 'job file "queries/gone.sql" does not exist', code: 'conflict' });
  const broken = (await api.request('POST', '/project/file/save', { body: { file: { name: 'replications/broken.yaml', body: U } } })).body;
  // A git pull may write an invalid file; the API never does.
  await writeFile(path.join(api.acme.root, 'replications', 'broken.yaml'), 'source: WAREHOUSE\nstreams:\n  a.b:\n    mode: merge\n');
  const invalid = await run({ job_id: broken.default_job_id });
  assert.deepEqual(invalid.body, { error: 'job file "replications/broken.yaml" is invalid', code: 'conflict' });
  // An existing invalid job file is still accepted by a job save.
  const job = await saveJob({ name: 'on broken', type: 'replication', file_name: 'replications/broken.yaml' });
  assert.equal(job.status, 200);
  assert.equal((await api.store.projectCounts(api.acme.id)).executions, before);
});

test('run: 200 with the exec id; trigger api, or manual with Service-Trigger; a query job on DuckDB succeeds and sets executed', async () => {
  const [job] = (await api.request('POST', '/project/job/list', { body: { file_name: 'queries/answer.sql' } })).body.jobs;
  const res = await run({ job_id: job.id });
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body), ['exec_id']);
  assert.match(res.body.exec_id, EXEC_ID);
  const manual = await run({ job_id: job.id }, { 'Service-Trigger': 'manual' });
  const get = async (id: string) => (await api.request('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: id }))}`)).body.executions[0];
  assert.deepEqual([(await get(res.body.exec_id)).trigger, (await get(manual.body.exec_id)).trigger], ['api', 'manual']);
  const done = await eventually(async () => {
    const e = await get(manual.body.exec_id);
    return e.status === 'queued' || e.status === 'running' ? undefined : e;
  }, 30_000, 'the query execution to finish');
  assert.equal(done.status, 'success', JSON.stringify(done));
  assert.deepEqual([done.job_name, done.job_type, done.file_name, done.rows, done.status_map.success], ['answer', 'query', 'queries/answer.sql', 1, 1]);
  const after = (await api.request('GET', `/project/job/get?job_id=${job.id}`)).body;
  assert.equal(after.executed, (await get(manual.body.exec_id)).start_time);
  const tasks = await api.request('POST', '/execution/replication-tasks', { body: { exec_id: manual.body.exec_id } });
  assert.deepEqual([tasks.body.tasks[0].stream_name, tasks.body.tasks[0].object, tasks.body.tasks[0].mode], ['queries/answer.sql', 'LAKE', 'query']);
  assert.match(tasks.body.tasks[0].output, /42/);
});
