/**
 * One behavioural contract for every StateStore backend (engine/state).
 * `runStoreContract` adds its cases as subtests of the caller's test; the
 * harness hands out a fresh, empty location per case (a new SQLite file, or a
 * new PostgreSQL schema) so cases never see each other's rows — which matters
 * for the store-wide operations (claiming, restart recovery).
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { EngineError } from '../engine/errors.js';
import { isExecId, isJobId, isProjectId, newToken, sha256hex } from '../engine/state/ids.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { publicExecution } from '../engine/state/public-execution.js';
import type { ExecutionQuery, ExecutionStatus, JobRecord, NewJob, StateStore, StateStoreOptions } from '../engine/state/store.js';

export interface StoreHarness {
  /** A fresh, empty store location. */
  location(): Promise<string>;
  /** The versions recorded in the location's schema_version table. */
  schemaVersions(location: string): Promise<number[]>;
}

/** 2025-03-01T00:00:00.000Z plus `s` seconds. */
const at = (s: number) => new Date(Date.UTC(2025, 2, 1) + s * 1000).toISOString();

const engineError = (code: string, message?: RegExp | string) => (err: unknown) => {
  assert.ok(err instanceof EngineError, `expected an EngineError, got ${String(err)}`);
  assert.equal(err.code, code);
  if (typeof message === 'string') assert.equal(err.message, message);
  else if (message) assert.match(err.message, message);
  return true;
};

function jobInput(projectId: string, over: Partial<NewJob> = {}): NewJob {
  return {
    project_id: projectId,
    name: 'users',
    type: 'replication',
    file_name: 'replications/users.yaml',
    description: '',
    active: false,
    default: false,
    streams: [],
    tags: [],
    schedules: [],
    timezone: 'UTC',
    policy: 'queue',
    config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    ...over,
  };
}

export async function runStoreContract(t: TestContext, h: StoreHarness): Promise<void> {
  const open: StateStore[] = [];
  /** A store on a fresh location (or on `location`), closed after the case. */
  const fresh = async (options: StateStoreOptions = {}, location?: string) => {
    const s = await openStateStore(location ?? (await h.location()), options);
    open.push(s);
    return s;
  };
  const withProject = async (options: StateStoreOptions = {}) => {
    const store = await fresh(options);
    const a = await store.createProject({ name: 'acme', created: at(0) });
    const b = await store.createProject({ name: 'beta', created: at(0) });
    return { store, a: a.id, b: b.id };
  };
  const newExec = (projectId: string, job: Pick<JobRecord, 'id' | 'name' | 'type' | 'file_name'>, start: string, over: Record<string, unknown> = {}) => ({
    project_id: projectId,
    job_id: job.id,
    job_name: job.name,
    job_type: job.type,
    file_name: job.file_name,
    trigger: 'api' as const,
    start_time: start,
    ...over,
  });
  const sub = async (name: string, fn: () => Promise<void>) => {
    await t.test(name, async () => {
      try {
        await fn();
      } finally {
        await Promise.all(open.splice(0).map((s) => s.close()));
      }
    });
  };

  await sub('projects: create, read, list by name, unique names, git patches, counts', async () => {
    const store = await fresh();
    const p = await store.createProject({ name: 'zeta', created: '2025-03-01T03:00:00+01:00' });
    assert.ok(isProjectId(p.id), p.id);
    assert.deepEqual(p, { id: p.id, name: 'zeta', git: null, created: '2025-03-01T02:00:00.000Z' });
    const q = await store.createProject({ name: 'alpha', git: { url: 'https://git.example.com/a.git' } as never });
    assert.deepEqual(q.git, { url: 'https://git.example.com/a.git', branch: 'main', enabled: true, poll_interval: 60, last_sha: null, last_pull: null, last_error: null });
    await assert.rejects(store.createProject({ name: 'zeta' }), engineError('conflict', 'project name "zeta" is already taken'));
    assert.deepEqual(await store.getProject(p.id), p);
    assert.deepEqual(await store.getProjectByName('alpha'), q);
    assert.equal(await store.getProject('proj_0000000000000000'), undefined);
    assert.equal(await store.getProjectByName('nope'), undefined);
    assert.deepEqual((await store.listProjects()).map((x) => x.name), ['alpha', 'zeta']);

    const pulled = await store.updateProjectGit(q.id, { last_sha: 'a'.repeat(40), last_pull: at(5), last_error: null });
    assert.deepEqual(pulled?.git, { url: 'https://git.example.com/a.git', branch: 'main', enabled: true, poll_interval: 60, last_sha: 'a'.repeat(40), last_pull: at(5), last_error: null });
    const disabled = await store.updateProjectGit(q.id, { enabled: false, last_error: 'git fetch failed: boom' });
    assert.equal(disabled?.git?.enabled, false);
    assert.equal(disabled?.git?.last_sha, 'a'.repeat(40), 'fields not in the patch are kept');
    assert.equal(disabled?.git?.last_error, 'git fetch failed: boom');
    assert.equal((await store.updateProjectGit(q.id, null))?.git, null);
    await assert.rejects(store.updateProjectGit(p.id, { branch: 'dev' }), engineError('bad_request'));
    assert.equal((await store.updateProjectGit(p.id, { url: 'file:///srv/git/z.git', poll_interval: 0 }))?.git?.poll_interval, 0);
    assert.equal(await store.updateProjectGit('proj_0000000000000000', { url: 'x' }), undefined);

    const job = await store.createJob(jobInput(p.id));
    await store.createExecution(newExec(p.id, job, at(1)));
    await store.createExecution(newExec(p.id, job, at(2)));
    assert.deepEqual(await store.projectCounts(p.id), { jobs: 1, executions: 2 });
    assert.deepEqual(await store.projectCounts(q.id), { jobs: 0, executions: 0 });
  });

  await sub('tokens: only digests are stored; lookup by digest, per project', async () => {
    const { store, a, b } = await withProject();
    const ta = newToken();
    const tb = newToken();
    await store.addToken(a, sha256hex(ta), 'ci');
    await store.addToken(b, sha256hex(tb));
    assert.equal(await store.projectIdForToken(sha256hex(ta)), a);
    assert.equal(await store.projectIdForToken(sha256hex(tb)), b);
    assert.equal(await store.projectIdForToken(sha256hex(newToken())), undefined);
    assert.equal(await store.projectIdForToken('not-a-digest'), undefined);
    assert.equal(await store.projectIdForToken(sha256hex(ta).toUpperCase()), undefined);
    await assert.rejects(store.addToken(a, ta), engineError('internal'), 'a raw token is not a digest');
    await assert.rejects(store.addToken('proj_0000000000000000', sha256hex(newToken())), engineError('not_found'));
  });

  await sub('jobs: create, replace, delete, filters, order, by file, isolation', async () => {
    const { store, a, b } = await withProject();
    const vars = { z: 1, a: 'x', m: true };
    const j1 = await store.createJob(jobInput(a, { created: at(10), tags: ['t1'], schedules: ['0 2 * * *'], config: { mode: 'full-refresh', threads: 2, vars, timeout: 30, retries: 1 } }));
    assert.ok(isJobId(j1.id));
    assert.equal(j1.updated, at(10));
    assert.deepEqual(Object.keys(j1.config.vars), ['z', 'a', 'm'], 'vars keep their order');
    assert.deepEqual(await store.getJob(a, j1.id), j1);
    assert.equal(await store.getJob(b, j1.id), undefined, "another project's job does not exist");
    // Same created time: the id breaks the tie.
    const j2 = await store.createJob(jobInput(a, { id: 'job_zzzzzzzzzzzzzzzz', name: 'pipe', type: 'pipeline', file_name: 'pipelines/daily.yaml', created: at(5), default: true }));
    const j3 = await store.createJob(jobInput(a, { id: 'job_0000000000000000', name: 'users', file_name: 'replications/sub/orders.yaml', created: at(5) }));
    const j4 = await store.createJob(jobInput(b, { created: at(1) }));
    assert.deepEqual((await store.listJobs(a)).map((j) => j.id), [j3.id, j2.id, j1.id]);
    assert.deepEqual((await store.listJobs(a, { name: 'users' })).map((j) => j.id), [j3.id, j1.id]);
    assert.deepEqual((await store.listJobs(a, { type: 'pipeline' })).map((j) => j.id), [j2.id]);
    assert.deepEqual((await store.listJobs(a, { name: 'users', file_name: 'replications/users.yaml' })).map((j) => j.id), [j1.id]);
    assert.deepEqual((await store.listJobs(b)).map((j) => j.id), [j4.id]);
    await store.createJob(jobInput(a, { file_name: 'replications0.yaml', created: at(20) }));
    await store.createJob(jobInput(a, { file_name: 'replicationsx/a.yaml', created: at(21) }));
    assert.deepEqual((await store.jobsByFile(a, 'replications')).map((j) => j.id), [j3.id, j1.id]);
    assert.deepEqual((await store.jobsByFile(a, 'replications/')).map((j) => j.id), [j3.id, j1.id]);
    assert.deepEqual((await store.jobsByFile(a, 'replications/users.yaml')).map((j) => j.id), [j1.id]);
    assert.deepEqual((await store.jobsByFile(b, 'replications/sub')).map((j) => j.id), []);

    const replaced = await store.replaceJob({ ...j1, name: 'users nightly', active: true, tags: [], updated: at(30) });
    assert.deepEqual(replaced, { ...j1, name: 'users nightly', active: true, tags: [], updated: at(30) });
    assert.equal(await store.replaceJob({ ...j1, project_id: b }), undefined, "replace through another project's id");
    assert.equal((await store.getJob(a, j1.id))?.name, 'users nightly');

    assert.equal(await store.deleteJob(b, j1.id), false);
    const e = await store.createExecution(newExec(a, j1, at(40)));
    await assert.rejects(store.deleteJob(a, j1.id), engineError('conflict', `job ${j1.id} has active executions`));
    await store.updateExecution(e.exec_id, { status: 'success', end_time: at(41) });
    assert.equal(await store.deleteJob(a, j1.id), true);
    assert.equal(await store.getJob(a, j1.id), undefined);
    assert.equal(await store.deleteJob(a, j1.id), false);
    assert.equal((await store.findExecution(e.exec_id))?.job_name, 'users', 'executions outlive their job');
    await assert.rejects(store.createJob(jobInput('proj_0000000000000000')), engineError('not_found'));
  });

  await sub('latest start time per job (a job’s `executed`)', async () => {
    const { store, a } = await withProject();
    const j1 = await store.createJob(jobInput(a));
    const j2 = await store.createJob(jobInput(a));
    assert.equal(await store.latestStartTime(j1.id), null);
    await store.createExecution(newExec(a, j1, at(7)));
    await store.createExecution(newExec(a, j1, at(3), { status: 'skipped' }));
    assert.equal(await store.latestStartTime(j1.id), at(7));
    const all = await store.latestStartTimes([j1.id, j2.id]);
    assert.deepEqual([...all], [[j1.id, at(7)]]);
  });

  await sub('executions: create, read, isolation, status_map, duration', async () => {
    const { store, a, b } = await withProject();
    const job = await store.createJob(jobInput(a));
    const e = await store.createExecution(newExec(a, job, '2025-03-01T09:30:00+01:00', { overrides: { mode: 'full-refresh' } }));
    assert.ok(isExecId(e.exec_id), e.exec_id);
    assert.deepEqual(e, {
      exec_id: e.exec_id, project_id: a, job_id: job.id, job_name: 'users', job_type: 'replication', file_name: 'replications/users.yaml',
      status: 'queued', error: null, trigger: 'api', start_time: '2025-03-01T08:30:00.000Z', end_time: null, duration: null, rows: 0, bytes: 0,
      status_map: { queued: 0, running: 0, success: 0, error: 0, warning: 0, skipped: 0, cancelled: 0, interrupted: 0 },
      build: null, overrides: { mode: 'full-refresh' },
    });
    assert.deepEqual(await store.getExecution(a, e.exec_id), e);
    assert.equal(await store.getExecution(b, e.exec_id), undefined);
    assert.deepEqual(await store.findExecution(e.exec_id), e);

    const skipped = await store.createExecution(newExec(a, job, at(100), { status: 'skipped', error: `job ${job.id} already has an active execution ${e.exec_id}` }));
    assert.equal(skipped.end_time, at(100));
    assert.equal(skipped.duration, 0);

    await store.upsertTasks([1, 2, 3].map((n) => ({ exec_id: e.exec_id, task_id: `task_${n}`, stream_name: `public.t${n}`, mode: 'full-refresh', status: 'queued' as const })));
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 'public.t1', mode: 'full-refresh', status: 'success' });
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_2', stream_name: 'public.t2', mode: 'full-refresh', status: 'running' });
    assert.deepEqual((await store.getExecution(a, e.exec_id))?.status_map, { queued: 1, running: 1, success: 1, error: 0, warning: 0, skipped: 0, cancelled: 0, interrupted: 0 });

    const pipeJob = await store.createJob(jobInput(a, { type: 'pipeline', file_name: 'p.yaml' }));
    const pe = await store.createExecution(newExec(a, pipeJob, at(200)));
    for (const [id, status] of [['load', 'success'], ['each', 'running'], ['each.q[0]', 'success'], ['each.q[1]', 'running']] as const) {
      await store.upsertStep({ exec_id: pe.exec_id, step_id: id, type: 'log', status });
    }
    const list = await store.listExecutions({ projectId: a, order: 'desc', limit: 10 });
    assert.deepEqual(list.map((x) => [x.exec_id, x.status_map.success, x.status_map.running, x.status_map.queued]), [
      [e.exec_id, 1, 1, 1],
      [pe.exec_id, 2, 2, 0],
      [skipped.exec_id, 0, 0, 0],
    ]);

    assert.equal(await store.updateExecution(e.exec_id, { status: 'running' }), true);
    assert.equal(await store.updateExecution(e.exec_id, { rows: 1520, bytes: 183040, build: { total: 3, ok_names: 'a,b' } }), true);
    assert.equal(await store.updateExecution(e.exec_id, { status: 'success', end_time: at(8 * 3600 + 30 * 60 + 4.25) }), true);
    const done = (await store.getExecution(a, e.exec_id))!;
    assert.equal(done.status, 'success');
    assert.equal(done.duration, 4.25);
    assert.deepEqual([done.rows, done.bytes, done.build], [1520, 183040, { total: 3, ok_names: 'a,b' }]);
  });

  await sub('a terminal execution never changes; ending it closes its open tasks and steps', async () => {
    const { store, a } = await withProject();
    const job = await store.createJob(jobInput(a));
    const e = await store.createExecution(newExec(a, job, at(0)));
    await store.updateExecution(e.exec_id, { status: 'running' });
    await store.upsertTasks([
      { exec_id: e.exec_id, task_id: 'task_1', stream_name: 's1', mode: 'm', status: 'success', end_time: at(2) },
      { exec_id: e.exec_id, task_id: 'task_2', stream_name: 's2', mode: 'm', status: 'running', start_time: at(1) },
      { exec_id: e.exec_id, task_id: 'task_3', stream_name: 's3', mode: 'm', status: 'queued' },
    ]);
    assert.equal(await store.updateExecution(e.exec_id, { status: 'cancelled', error: 'cancelled by request', end_time: at(5) }), true);
    const tasks = await store.listTasks(e.exec_id, { excludeOutput: true });
    assert.deepEqual(tasks.map((x) => [x.task_id, x.status, x.end_time]), [['task_1', 'success', at(2)], ['task_2', 'cancelled', at(5)], ['task_3', 'cancelled', at(5)]]);
    // Nothing moves a terminal execution, or its terminal tasks, again.
    assert.equal(await store.updateExecution(e.exec_id, { status: 'running' }), false);
    assert.equal(await store.updateExecution(e.exec_id, { status: 'success', rows: 9, error: null }), false);
    assert.equal(await store.updateExecution('2p0000000000000000000000000', { status: 'success' }), false);
    const after = (await store.getExecution(a, e.exec_id))!;
    assert.deepEqual([after.status, after.error, after.rows, after.end_time], ['cancelled', 'cancelled by request', 0, at(5)]);
    assert.equal(await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_2', stream_name: 's2', mode: 'm', status: 'success', rows: 5 }), false, 'a late result is dropped');
    assert.equal((await store.listTasks(e.exec_id, { status: 'cancelled' })).length, 2);

    // Ending in error: open tasks become cancelled; a terminal status without end_time ends now.
    const e2 = await store.createExecution(newExec(a, job, at(10)));
    await store.upsertTask({ exec_id: e2.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'queued' });
    const before = Date.now();
    assert.equal(await store.updateExecution(e2.exec_id, { status: 'error', error: 's: boom' }), true);
    const e2done = (await store.findExecution(e2.exec_id))!;
    assert.ok(Date.parse(e2done.end_time!) >= before - 1000);
    assert.deepEqual((await store.listTasks(e2.exec_id)).map((x) => x.status), ['cancelled']);

    // finishActive for a pipeline's steps.
    const e3 = await store.createExecution(newExec(a, job, at(20)));
    await store.upsertStep({ exec_id: e3.exec_id, step_id: 'a', type: 'log', status: 'success' });
    await store.upsertStep({ exec_id: e3.exec_id, step_id: 'b', type: 'http', status: 'running' });
    assert.equal(await store.finishActive(e3.exec_id, 'interrupted', at(21)), 1);
    assert.deepEqual((await store.listSteps(e3.exec_id)).map((s) => [s.step_id, s.status, s.end_time]), [['a', 'success', null], ['b', 'interrupted', at(21)]]);
    await assert.rejects(store.finishActive(e3.exec_id, 'running', at(22)), engineError('internal'));
  });

  await sub('listExecutions: filters, period, order with ties, limit, isolation', async () => {
    const { store, a, b } = await withProject();
    const j1 = await store.createJob(jobInput(a));
    const j2 = await store.createJob(jobInput(a, { name: 'other' }));
    const ids: string[] = [];
    const statuses: ExecutionStatus[] = ['success', 'error', 'success', 'warning', 'queued', 'success'];
    for (let i = 0; i < 6; i++) {
      // Two executions share each start time (ties resolved by exec_id).
      const e = await store.createExecution(newExec(a, i % 2 ? j2 : j1, at(Math.floor(i / 2) * 60), { status: statuses[i] }));
      ids.push(e.exec_id);
    }
    const jb = await store.createJob(jobInput(b));
    await store.createExecution(newExec(b, jb, at(30)));
    const idsOf = async (q: Partial<Parameters<StateStore['listExecutions']>[0]>) =>
      (await store.listExecutions({ projectId: a, order: 'desc', limit: 100, ...q })).map((e) => e.exec_id);
    assert.deepEqual(await idsOf({}), [...ids].reverse());
    assert.deepEqual(await idsOf({ order: 'asc' }), ids);
    assert.deepEqual(await idsOf({ limit: 2 }), [ids[5], ids[4]]);
    assert.deepEqual(await idsOf({ order: 'asc', limit: 3 }), ids.slice(0, 3));
    assert.deepEqual(await idsOf({ jobId: j2.id, order: 'asc' }), [ids[1], ids[3], ids[5]]);
    assert.deepEqual(await idsOf({ status: 'success', order: 'asc' }), [ids[0], ids[2], ids[5]]);
    assert.deepEqual(await idsOf({ status: ['success', 'warning'], jobId: j2.id }), [ids[5], ids[3]]);
    assert.deepEqual(await idsOf({ status: [] }), []);
    assert.deepEqual(await idsOf({ execId: ids[3] }), [ids[3]]);
    assert.deepEqual(await idsOf({ execId: ids[3], status: 'error' }), []);
    // start <= start_time < end
    assert.deepEqual(await idsOf({ period: [at(60), at(120)], order: 'asc' }), [ids[2], ids[3]]);
    assert.deepEqual(await idsOf({ period: ['2025-03-01T01:01:00+01:00', at(121)], order: 'asc' }), [ids[2], ids[3], ids[4], ids[5]]);
    assert.deepEqual(await idsOf({ period: [at(61), at(61)] }), []);
    // Keyset paging: strictly past (start_time, exec_id) in the order asked, a tie on start_time included.
    const e3 = { start_time: at(60), exec_id: ids[3]! };
    assert.deepEqual(await idsOf({ after: e3 }), [ids[2], ids[1], ids[0]]);
    assert.deepEqual(await idsOf({ after: { start_time: at(60), exec_id: ids[2]! }, order: 'asc' }), [ids[3], ids[4], ids[5]]);
    assert.deepEqual(await idsOf({ after: e3, jobId: j2.id }), [ids[1]]);
    assert.deepEqual(await idsOf({ after: e3, limit: 1 }), [ids[2]]);
    // Project isolation.
    assert.deepEqual(await idsOf({ execId: ids[0], projectId: b }), []);
    assert.equal((await idsOf({ projectId: b })).length, 1);
    assert.deepEqual(await idsOf({ jobId: jb.id }), []);
    await assert.rejects(store.listExecutions({ projectId: a, order: 'asc', limit: 0 }), engineError('internal'));
  });

  await sub('claimNextQueued: oldest first, never two running per job, maxRunning, owners', async () => {
    const { store, a } = await withProject();
    const j = await store.createJob(jobInput(a, { name: 'j' }));
    const k = await store.createJob(jobInput(a, { name: 'k' }));
    const j1 = await store.createExecution(newExec(a, j, at(0)));
    const j2 = await store.createExecution(newExec(a, j, at(0)));
    const k1 = await store.createExecution(newExec(a, k, at(0)));
    assert.ok(j1.exec_id < j2.exec_id && j2.exec_id < k1.exec_id, 'ids made in one second still sort by creation');
    const first = await store.claimNextQueued();
    assert.deepEqual([first?.exec_id, first?.status], [j1.exec_id, 'running']);
    assert.equal((await store.claimNextQueued())?.exec_id, k1.exec_id, 'j2 waits: its job is running');
    assert.equal(await store.claimNextQueued(), undefined);
    await assert.rejects(store.updateExecution(j2.exec_id, { status: 'running' }), engineError('conflict'));
    await store.updateExecution(j1.exec_id, { status: 'success' });
    assert.equal(await store.claimNextQueued({ maxRunning: 1 }), undefined, 'k1 is running: no slot');
    assert.equal((await store.claimNextQueued({ maxRunning: 2 }))?.exec_id, j2.exec_id);
    // A cancelled queued execution is never claimed.
    const j3 = await store.createExecution(newExec(a, j, at(1)));
    await store.updateExecution(j3.exec_id, { status: 'cancelled', error: 'cancelled by request' });
    await store.updateExecution(j2.exec_id, { status: 'success' });
    assert.equal(await store.claimNextQueued(), undefined);
    // Owners: maxRunning counts the owner's own running executions.
    const l = await store.createJob(jobInput(a, { name: 'l' }));
    const l1 = await store.createExecution(newExec(a, l, at(2)));
    assert.equal((await store.claimNextQueued({ maxRunning: 1, owner: 'daemon-b' }))?.exec_id, l1.exec_id);
    await store.updateExecution(k1.exec_id, { status: 'success' });
    const k2 = await store.createExecution(newExec(a, k, at(3)));
    assert.equal(await store.claimNextQueued({ maxRunning: 1, owner: 'daemon-b' }), undefined);
    assert.equal((await store.claimNextQueued({ maxRunning: 1, owner: 'daemon-a' }))?.exec_id, k2.exec_id);
  });

  await sub('claims racing from two connections never start two executions of one job', async () => {
    const location = await h.location();
    const s1 = await fresh({}, location);
    const s2 = await fresh({}, location);
    const p = await s1.createProject({ name: 'race' });
    const jobs = await Promise.all([0, 1, 2].map((i) => s1.createJob(jobInput(p.id, { name: `j${i}` }))));
    for (let round = 0; round < 3; round++) for (const j of jobs) await s1.createExecution(newExec(p.id, j, at(round)));
    const claimed = await Promise.all([s1, s2, s1, s2, s1, s2].map((s, i) => s.claimNextQueued({ owner: `d${i % 2}` })));
    const got = claimed.filter((c) => c !== undefined);
    assert.equal(got.length, 3, 'one per job');
    assert.equal(new Set(got.map((c) => c.job_id)).size, 3);
    for (const j of jobs) assert.equal((await s2.activeExecutions(j.id)).filter((e) => e.status === 'running').length, 1);
  });

  await sub('restart recovery: running executions and their open tasks become interrupted', async () => {
    const { store, a } = await withProject();
    const j = await store.createJob(jobInput(a));
    const k = await store.createJob(jobInput(a));
    const run = await store.createExecution(newExec(a, j, at(0)));
    const queued = await store.createExecution(newExec(a, j, at(1)));
    const other = await store.createExecution(newExec(a, k, at(2)));
    await store.claimNextQueued({ owner: 'me' });
    await store.claimNextQueued({ owner: 'someone-else' });
    await store.upsertTasks([
      { exec_id: run.exec_id, task_id: 'task_1', stream_name: 'a', mode: 'm', status: 'success' },
      { exec_id: run.exec_id, task_id: 'task_2', stream_name: 'b', mode: 'm', status: 'running' },
      { exec_id: run.exec_id, task_id: 'task_3', stream_name: 'c', mode: 'm', status: 'queued' },
    ]);
    const msg = 'the daemon stopped while the execution was running';
    assert.deepEqual(await store.markRunningInterrupted(at(50), msg, 'me'), [run.exec_id]);
    assert.equal((await store.findExecution(other.exec_id))?.status, 'running', "another owner's execution is left alone");
    assert.deepEqual(await store.markRunningInterrupted(at(60), msg), [other.exec_id]);
    const r = (await store.getExecution(a, run.exec_id))!;
    assert.deepEqual([r.status, r.error, r.end_time], ['interrupted', msg, at(50)]);
    assert.deepEqual(r.status_map, { queued: 0, running: 0, success: 1, error: 0, warning: 0, skipped: 0, cancelled: 0, interrupted: 2 });
    assert.equal((await store.findExecution(queued.exec_id))?.status, 'queued', 'queued executions stay queued');
    assert.deepEqual(await store.markRunningInterrupted(at(70), msg), []);
  });

  await sub('activeExecutions lists a job’s queued and running executions, oldest first', async () => {
    const { store, a } = await withProject();
    const j = await store.createJob(jobInput(a));
    const e1 = await store.createExecution(newExec(a, j, at(0)));
    const e2 = await store.createExecution(newExec(a, j, at(1)));
    await store.createExecution(newExec(a, j, at(2), { status: 'skipped' }));
    await store.claimNextQueued();
    assert.deepEqual((await store.activeExecutions(j.id)).map((e) => [e.exec_id, e.status]), [[e1.exec_id, 'running'], [e2.exec_id, 'queued']]);
  });

  await sub('tasks: task order, partial upserts, filters, output', async () => {
    const { store, a } = await withProject();
    const j = await store.createJob(jobInput(a));
    const e = await store.createExecution(newExec(a, j, at(0)));
    const ids = Array.from({ length: 11 }, (_, i) => `task_${i + 1}`);
    await store.upsertTasks([...ids].reverse().map((id, i) => ({ exec_id: e.exec_id, task_id: id, stream_name: i % 2 ? 'public.a' : 'public.b', object: null, mode: 'full-refresh', status: 'queued' as const })));
    assert.deepEqual((await store.listTasks(e.exec_id, { excludeOutput: true })).map((x) => x.task_id), ids, 'task_10 sorts after task_9');
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_2', stream_name: 'public.a', mode: 'full-refresh', status: 'running', start_time: at(1), object: 'main.a' });
    await store.appendTaskOutput(e.exec_id, 'task_2', 'line 1\n');
    await store.appendTaskOutput(e.exec_id, 'task_2', 'line 2 ünïcødé\n');
    await store.appendTaskOutput(e.exec_id, 'task_2', '');
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_2', stream_name: 'public.a', mode: 'full-refresh', status: 'success', end_time: at(3), rows: 7, bytes: 700, metrics: { row_count: 7 } });
    await store.appendTaskOutput(e.exec_id, 'task_2', 'done\n');
    const [t2] = await store.listTasks(e.exec_id, { status: 'success' });
    assert.deepEqual(t2, {
      exec_id: e.exec_id, task_id: 'task_2', seq: 2, stream_name: 'public.a', object: 'main.a', mode: 'full-refresh', status: 'success', error: null,
      start_time: at(1), end_time: at(3), rows: 7, bytes: 700, metrics: { row_count: 7 }, output: 'line 1\nline 2 ünïcødé\ndone\n',
    });
    const noOutput = await store.listTasks(e.exec_id, { status: 'success', excludeOutput: true });
    assert.equal('output' in noOutput[0]!, false);
    assert.deepEqual((await store.listTasks(e.exec_id, { stream: 'public.b' })).map((x) => [x.task_id, x.output]), ids.filter((_, i) => i % 2 === 0).map((id) => [id, '']));
    assert.deepEqual(await store.listTasks(e.exec_id, { stream: 'public.b', status: 'success' }), []);
    // A non-`task_<n>` id goes after the last task.
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'extra', stream_name: 'x', mode: 'query', status: 'queued' });
    assert.equal((await store.listTasks(e.exec_id)).at(-1)?.seq, 12);
    await assert.rejects(store.appendTaskOutput(e.exec_id, 'task_99', 'x'), engineError('internal', `task task_99 of execution ${e.exec_id} does not exist`));
    await assert.rejects(store.upsertTask({ exec_id: '2p0000000000000000000000000', task_id: 'task_1', stream_name: 's', mode: 'm', status: 'queued' }), engineError('not_found'));
    // NUL cannot be stored by PostgreSQL; both backends keep U+FFFD.
    await store.appendTaskOutput(e.exec_id, 'task_1', 'a\u0000b');
    assert.equal((await store.listTasks(e.exec_id, { stream: 'public.b' }))[0]?.output, 'a\uFFFDb');
  });

  await sub('steps: start order, prefix filter on `.` and `[`, state, output', async () => {
    const { store, a } = await withProject();
    const j = await store.createJob(jobInput(a, { type: 'pipeline' }));
    const e = await store.createExecution(newExec(a, j, at(0)));
    const order = ['load', 'each', 'each.q[1]', 'each.q[0]', 'each.r', 'eachx', 'each2.q', 'step_8'];
    for (const id of order) await store.upsertStep({ exec_id: e.exec_id, step_id: id, type: 'query', status: 'running', start_time: at(1) });
    await store.upsertStep({ exec_id: e.exec_id, step_id: 'load', type: 'replication', status: 'success', end_time: at(2), state: { rows: 3 } });
    await store.appendStepOutput(e.exec_id, 'each.q[0]', 'q0\n');
    const steps = await store.listSteps(e.exec_id);
    assert.deepEqual(steps.map((s) => s.step_id), order);
    assert.deepEqual(steps.map((s) => s.seq), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(steps[0], { exec_id: e.exec_id, step_id: 'load', seq: 1, type: 'replication', status: 'success', error: null, start_time: at(1), end_time: at(2), output: '', state: { rows: 3 } });
    assert.deepEqual((await store.listSteps(e.exec_id, { stepIdPrefix: 'each' })).map((s) => s.step_id), ['each', 'each.q[1]', 'each.q[0]', 'each.r']);
    assert.deepEqual((await store.listSteps(e.exec_id, { stepIdPrefix: 'each.q', excludeOutput: true })).map((s) => [s.step_id, 'output' in s]), [['each.q[1]', false], ['each.q[0]', false]]);
    assert.deepEqual((await store.listSteps(e.exec_id, { stepIdPrefix: 'each.q[0]' })).map((s) => s.output), ['q0\n']);
    assert.deepEqual(await store.listSteps(e.exec_id, { stepIdPrefix: 'loa' }), []);
    assert.equal(await store.upsertStep({ exec_id: e.exec_id, step_id: 'load', type: 'replication', status: 'error' }), false);
    await assert.rejects(store.appendStepOutput(e.exec_id, 'nope', 'x'), engineError('internal'));
  });

  await sub('output is capped: what fits, then one `[output truncated]` line, then nothing', async () => {
    const { store, a } = await withProject({ outputCapBytes: 20 });
    const j = await store.createJob(jobInput(a));
    const e = await store.createExecution(newExec(a, j, at(0)));
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'running' });
    await store.upsertTask({ exec_id: e.exec_id, task_id: 'task_2', stream_name: 's', mode: 'm', status: 'running' });
    await store.upsertStep({ exec_id: e.exec_id, step_id: 'x', type: 'log', status: 'running' });
    const out = async (id: string) => (await store.listTasks(e.exec_id)).find((x) => x.task_id === id)?.output;
    await store.appendTaskOutput(e.exec_id, 'task_1', '0123456789\n');
    await store.appendTaskOutput(e.exec_id, 'task_1', '01234567\n'); // exactly 20 bytes: no marker
    assert.equal(await out('task_1'), '0123456789\n01234567\n');
    await store.appendTaskOutput(e.exec_id, 'task_1', 'x\n');
    assert.equal(await out('task_1'), '0123456789\n01234567\n[output truncated]\n');
    await store.appendTaskOutput(e.exec_id, 'task_1', 'more\n');
    assert.equal(await out('task_1'), '0123456789\n01234567\n[output truncated]\n', 'later appends are dropped');
    // The crossing append keeps what fits, cut at a character boundary (ü is 2 bytes).
    await store.appendTaskOutput(e.exec_id, 'task_2', 'abcdefghijklmnopqrsü and the rest\n');
    assert.equal(await out('task_2'), 'abcdefghijklmnopqrs\n[output truncated]\n');
    await store.appendStepOutput(e.exec_id, 'x', '1234567890');
    await store.appendStepOutput(e.exec_id, 'x', '1234567890');
    await store.appendStepOutput(e.exec_id, 'x', '1');
    assert.equal((await store.listSteps(e.exec_id))[0]?.output, '12345678901234567890\n[output truncated]\n');
  });

  await sub('ping: a read of the store within the bound, several at once', async () => {
    const store = await fresh();
    const times = await Promise.all([store.ping(5000), store.ping(5000), store.ping(5000)]);
    for (const ms of times) assert.ok(Number.isFinite(ms) && ms >= 0, String(ms));
  });

  await sub('build watermarks', async () => {
    const store = await fresh();
    assert.equal(await store.getWatermark('DUCK', 'public.inc'), undefined);
    await store.setWatermark('DUCK', 'public.inc', "'2024-01-15T00:00:00Z'", at(1));
    await store.setWatermark('DUCK', 'public.inc', "'2024-01-29T00:00:00Z'", at(2));
    assert.deepEqual(await store.getWatermark('DUCK', 'public.inc'), { value: "'2024-01-29T00:00:00Z'", updatedAt: at(2) });
  });

  await sub('migrations run once; data survives close and reopen', async () => {
    const location = await h.location();
    const s1 = await openStateStore(location);
    const p = await s1.createProject({ name: 'keep' });
    const job = await s1.createJob(jobInput(p.id));
    const e = await s1.createExecution(newExec(p.id, job, at(0)));
    await s1.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'running' });
    await s1.appendTaskOutput(e.exec_id, 'task_1', 'hello\n');
    await s1.close();
    const s2 = await openStateStore(location);
    open.push(s2);
    await openStateStore(location).then((s3) => s3.close());
    assert.deepEqual(await h.schemaVersions(location), [1, 2, 3]);
    assert.deepEqual(await s2.getProjectByName('keep'), p);
    assert.deepEqual(await s2.getJob(p.id, job.id), job);
    assert.equal((await s2.listTasks(e.exec_id))[0]?.output, 'hello\n');
    assert.equal((await s2.findExecution(e.exec_id))?.status, 'queued');
  });

  await sub('listExecutionsJson: byte for byte JSON.stringify of the public records, for every filter (SQLite: on reader threads too)', async () => {
    const location = await h.location();
    const store = await fresh({}, location);
    const a = (await store.createProject({ name: 'acme', created: at(0) })).id;
    const b = (await store.createProject({ name: 'beta', created: at(0) })).id;
    // j2…j5: one each for the active executions (a job has at most one running).
    const jobs = await Promise.all(['j0', 'j1', 'j2', 'j3', 'j4', 'j5'].map((name) => store.createJob(jobInput(a, { name }))));
    // Text a JSON encoder must escape, durations of every shape (whole seconds, trailing zeros, days, negative), maps of tasks and steps.
    const odd = 'quote " backslash \\ slash / tab \t newline \n nul-free \u0001\u001f \u2028 é 😀 \u007f';
    const ends = [null, 0, 250, 1000, 10_000, 1_230, 86_400_001, 3 * 86_400_000 + 5, -5_000, 999];
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const end = ends[i % ends.length];
      const job = jobs[end === null ? 2 + i / ends.length : i % 2]!;
      const start = at(i * 60);
      const e = await store.createExecution(newExec(a, { ...job, name: i % 3 === 0 ? odd : job.name }, start, {
        status: end === null ? (i % 4 === 0 ? 'queued' : 'running') : (['success', 'error', 'warning', 'cancelled'] as const)[i % 4],
        end_time: end === null ? null : new Date(Date.parse(start) + end).toISOString(),
        error: i % 5 === 0 ? `failed: ${odd}` : null,
        rows: i * 1000, bytes: i * 2 ** 40,
        build: i % 6 === 0 ? { total: i, ok_names: odd, nested: { list: [1, 2.5, -0.125, null, true, 'x'], e: 1e21 } } : null,
        trigger: (['manual', 'api', 'schedule', 'git'] as const)[i % 4],
      }));
      ids.push(e.exec_id);
      if (i % 7 === 1) {
        await store.upsertTasks([1, 2, 3].map((n) => ({ exec_id: e.exec_id, task_id: `task_${n}`, stream_name: `s${n}`, mode: 'full-refresh', status: (['queued', 'running', 'success'] as const)[n - 1] })));
      }
      if (i % 7 === 3) for (const [id, status] of [['a', 'success'], ['b', 'error'], ['b.c', 'skipped']] as const) await store.upsertStep({ exec_id: e.exec_id, step_id: id, type: 'log', status });
    }
    const queries: Omit<ExecutionQuery, 'projectId'>[] = [];
    for (const order of ['asc', 'desc'] as const) {
      for (const limit of [1, 7, 100]) {
        queries.push({ order, limit });
        queries.push({ order, limit, jobId: jobs[1]!.id });
        queries.push({ order, limit, status: 'success' });
        queries.push({ order, limit, status: ['running', 'error'] });
        queries.push({ order, limit, status: [] });
        queries.push({ order, limit, period: [at(300), at(1500)] });
        queries.push({ order, limit, jobId: jobs[0]!.id, status: 'queued', period: [at(0), at(10_000)] });
        queries.push({ order, limit, after: { start_time: at(900), exec_id: ids[15]! } });
        queries.push({ order, limit, execId: ids[12]! });
      }
    }
    // PostgreSQL ignores readerThreads: the same store again.
    const readers = await fresh({ readerThreads: 2 }, location);
    const checkAll = async (when: string) => {
      for (const q of queries) {
        for (const projectId of [a, b]) {
          const query = { ...q, projectId };
          const expected = JSON.stringify((await store.listExecutions(query)).map(publicExecution));
          assert.equal((await store.listExecutionsJson(query)).toString('utf8'), expected, `${when}: ${JSON.stringify(query)}`);
          assert.equal((await readers.listExecutionsJson(query)).toString('utf8'), expected, `${when}, reader threads: ${JSON.stringify(query)}`);
        }
      }
    };
    await checkAll('as stored');
    assert.equal(JSON.parse((await store.listExecutionsJson({ projectId: a, order: 'asc', limit: 100 })).toString()).length, 40);
    // Changes that alter a finished execution's page entry after it ended: each shows at once.
    const one = async (execId: string) => JSON.parse((await readers.listExecutionsJson({ projectId: a, execId, order: 'asc', limit: 1 })).toString())[0];
    await store.upsertTask({ exec_id: ids[2]!, task_id: 'task_7', stream_name: 'late', mode: 'full-refresh', status: 'running' });
    assert.equal((await one(ids[2]!)).status_map.running, 1, 'a task created after the end');
    await store.upsertTask({ exec_id: ids[2]!, task_id: 'task_7', stream_name: 'late', mode: 'full-refresh', status: 'error' });
    assert.deepEqual([(await one(ids[2]!)).status_map.running, (await one(ids[2]!)).status_map.error], [0, 1], 'its status changing');
    await store.upsertStep({ exec_id: ids[4]!, step_id: 'late', type: 'log', status: 'warning' });
    assert.equal((await one(ids[4]!)).status_map.warning, 1, 'a step created after the end');
    // Ending: open tasks take the end status in the same transaction; interrupted by a restart.
    await store.upsertTasks([1, 2].map((n) => ({ exec_id: ids[10]!, task_id: `task_${n}`, stream_name: `s${n}`, mode: 'm', status: 'running' as const })));
    assert.equal(await store.updateExecution(ids[10]!, { status: 'cancelled', end_time: at(601.5), rows: 7 }), true);
    const ended = await one(ids[10]!);
    assert.deepEqual([ended.status, ended.duration, ended.rows, ended.status_map.cancelled, ended.status_map.running], ['cancelled', 1.5, 7, 2, 0]);
    await store.upsertStep({ exec_id: ids[30]!, step_id: 'x', type: 'log', status: 'running' });
    assert.deepEqual(await store.markRunningInterrupted(at(1801), 'stopped'), [ids[30]!]);
    assert.deepEqual([(await one(ids[30]!)).status, (await one(ids[30]!)).status_map.interrupted], ['interrupted', 1]);
    await checkAll('after changes to finished executions');
  });

  await sub('100,000 executions: bulk insert in batches, then the right page', async () => {
    const { store, a, b } = await withProject();
    const jobs = await Promise.all([0, 1, 2, 3].map((i) => store.createJob(jobInput(a, { name: `j${i}` }))));
    const statuses: ExecutionStatus[] = ['success', 'error', 'warning', 'success', 'cancelled'];
    const all: { exec_id: string; job: number; start: string; status: ExecutionStatus }[] = [];
    const base = Date.UTC(2024, 0, 1);
    for (let batch = 0; batch < 10; batch++) {
      const rows = [];
      for (let i = 0; i < 10_000; i++) {
        const n = batch * 10_000 + i;
        // Every start time is shared by two executions to exercise the exec_id tie-break.
        const start = new Date(base + Math.floor(n / 2) * 60_000).toISOString();
        const exec_id = `${String(n).padStart(7, '0')}${'0'.repeat(20)}`;
        const rec = { exec_id, job: n % 4, start, status: statuses[n % 5]! };
        all.push(rec);
        rows.push(newExec(a, jobs[rec.job]!, start, { exec_id, status: rec.status }));
      }
      await store.insertExecutionsBulk(rows);
    }
    assert.deepEqual(await store.projectCounts(a), { jobs: 4, executions: 100_000 });
    const period: [string, string] = [new Date(base + 20_000 * 60_000).toISOString(), new Date(base + 30_000 * 60_000).toISOString()];
    const expected = all
      .filter((r) => r.job === 1 && r.status === 'success' && r.start >= period[0] && r.start < period[1])
      .sort((x, y) => (x.start === y.start ? (x.exec_id < y.exec_id ? 1 : -1) : x.start < y.start ? 1 : -1))
      .slice(0, 25)
      .map((r) => r.exec_id);
    const page = await store.listExecutions({ projectId: a, jobId: jobs[1]!.id, status: 'success', period, order: 'desc', limit: 25 });
    assert.equal(page.length, 25);
    assert.deepEqual(page.map((e) => e.exec_id), expected);
    const oldest = await store.listExecutions({ projectId: a, order: 'asc', limit: 3 });
    assert.deepEqual(oldest.map((e) => e.exec_id), all.slice(0, 3).map((r) => r.exec_id));
    assert.deepEqual((await store.listExecutions({ projectId: a, order: 'desc', limit: 1 }))[0]?.exec_id, all.at(-1)?.exec_id);
    assert.deepEqual(await store.listExecutions({ projectId: b, order: 'desc', limit: 100 }), []);
    assert.equal(await store.latestStartTime(jobs[3]!.id), all.filter((r) => r.job === 3).at(-1)?.start);
  });
}
