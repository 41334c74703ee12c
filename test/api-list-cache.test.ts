// The execution-list page cache (http/page-cache.ts, README "Decisions"):
// `GET /execution/list` reuses a page's bytes only while the state store's
// change token holds. On the real SQLite store over real HTTP, every kind of
// write that can change a page — made the way the runtime makes it, or by
// another connection to the same file (an operator command, a second store) —
// must show in the very next answer; a repeated request without writes must
// be served from the cache, byte for byte what a fresh query gives.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../engine/state/sqlite-store.js';
import type { ExecutionRecord, JobRecord, StateStore } from '../engine/state/store.js';
import { PageCache } from '../http/page-cache.js';
import { startApiServer, type ApiServer } from './helpers/api-server.js';

let a: ApiServer;
let job: JobRecord;
let pipelineJob: JobRecord;
/** Calls of store.listExecutionsJson made by the route (a cache hit makes none). */
let queries = 0;

const newJob = (name: string, type: 'query' | 'pipeline') => ({
  project_id: a.acme.id, name, type, file_name: `${name}.${type === 'query' ? 'sql' : 'yaml'}`, description: '', active: false, default: false,
  streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue' as const, config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
});

before(async () => {
  a = await startApiServer();
  // The route holds this same store object: count its page queries.
  const list = a.store.listExecutionsJson.bind(a.store);
  a.store.listExecutionsJson = (q) => {
    queries++;
    return list(q);
  };
  // The daemon's dispatcher would claim and run queued executions of these jobs; keep it out.
  await a.executions.shutdown(0);
  job = await a.store.createJob(newJob('cached', 'query'));
  pipelineJob = await a.store.createJob(newJob('flow', 'pipeline'));
});

after(async () => {
  await a?.close();
});

const PATH = '/execution/list?limit=100';

async function rawList(path = PATH, token?: string): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(a.url + path, { headers: { authorization: `Service-Project-Token ${token ?? a.acme.token}` } });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

async function list(path = PATH, token?: string): Promise<any[]> {
  const res = await rawList(path, token);
  assert.equal(res.status, 200, res.text);
  return JSON.parse(res.text).executions;
}

const byId = async (execId: string): Promise<any> => (await list()).find((e) => e.exec_id === execId);

/** Asserts that the next list answer, after `write`, shows what `check` expects (the page before was cached). */
async function afterWrite(what: string, write: () => Promise<unknown>, check: (page: any[]) => void | Promise<void>): Promise<void> {
  await list();
  const before = queries;
  await list();
  assert.equal(queries, before, `${what}: the repeated request before the write was not served from the cache`);
  await write();
  const page = await list();
  assert.equal(queries, before + 1, `${what}: the write did not invalidate the cached page`);
  await check(page);
}

let seq = 0;
const startTime = () => new Date(Date.UTC(2025, 0, 1, 0, 0, seq++)).toISOString();

async function newExecution(overrides: Partial<Parameters<StateStore['createExecution']>[0]> = {}): Promise<ExecutionRecord> {
  return a.store.createExecution({
    project_id: a.acme.id, job_id: job.id, job_name: job.name, job_type: 'query', file_name: job.file_name, trigger: 'api', start_time: startTime(), ...overrides,
  });
}

test('a repeated request is a cache hit with the same bytes and headers as the query that filled it', async () => {
  await newExecution({ status: 'success', end_time: '2025-01-01T00:00:00.250Z' });
  const first = await rawList();
  const n = queries;
  const second = await rawList();
  assert.equal(queries, n, 'second request hit the cache');
  assert.equal(second.text, first.text);
  assert.equal(second.type, 'application/json; charset=utf-8');
  assert.equal(first.type, 'application/json; charset=utf-8');
  // Another query string is another page.
  const one = await list('/execution/list?limit=1');
  assert.equal(queries, n + 1);
  assert.equal(one.length, 1);
});

test('a new execution shows at once', async () => {
  let created: ExecutionRecord;
  await afterWrite('createExecution', async () => (created = await newExecution()), (page) => {
    assert.equal(page[0].exec_id, created.exec_id);
    assert.equal(page[0].status, 'queued');
    assert.equal(page[0].duration, null);
  });
  await afterWrite('updateExecution (queued → success)', () => a.store.updateExecution(created!.exec_id, { status: 'success', end_time: new Date(Date.parse(created!.start_time) + 250).toISOString() }), (page) => {
    assert.deepEqual([page[0].status, page[0].duration], ['success', 0.25]);
  });
});

test('bulk inserts show at once', async () => {
  const before = (await list()).length;
  await afterWrite('insertExecutionsBulk', () => a.store.insertExecutionsBulk([
    { project_id: a.acme.id, job_id: job.id, job_name: job.name, job_type: 'query', file_name: job.file_name, trigger: 'api', status: 'success', start_time: startTime(), end_time: null },
  ]), (page) => assert.equal(page.length, before + 1));
});

test('claim, progress, end, tasks and their statuses each show at once', async () => {
  const e = await newExecution();
  await afterWrite('claimNextQueued', () => a.store.claimNextQueued(), (page) => {
    assert.equal(page.find((x) => x.exec_id === e.exec_id).status, 'running');
  });
  await afterWrite('upsertTask (new)', () => a.store.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 'q.sql', mode: 'query', status: 'queued' }), (page) => {
    assert.equal(page.find((x) => x.exec_id === e.exec_id).status_map.queued, 1);
  });
  await afterWrite('upsertTasks (status change)', () => a.store.upsertTasks([{ exec_id: e.exec_id, task_id: 'task_1', stream_name: 'q.sql', mode: 'query', status: 'running', start_time: startTime() }]), (page) => {
    const m = page.find((x) => x.exec_id === e.exec_id).status_map;
    assert.deepEqual([m.queued, m.running], [0, 1]);
  });
  await afterWrite('updateExecution (rows, bytes)', () => a.store.updateExecution(e.exec_id, { rows: 42, bytes: 4200 }), (page) => {
    const x = page.find((y) => y.exec_id === e.exec_id);
    assert.deepEqual([x.rows, x.bytes], [42, 4200]);
  });
  await afterWrite('updateExecution (terminal)', () => a.store.updateExecution(e.exec_id, { status: 'error', error: 'boom', end_time: new Date(Date.parse(e.start_time) + 1500).toISOString() }), (page) => {
    const x = page.find((y) => y.exec_id === e.exec_id);
    assert.deepEqual([x.status, x.error, x.duration], ['error', 'boom', 1.5]);
    // The open task was closed in the same transaction.
    assert.deepEqual([x.status_map.running, x.status_map.cancelled], [0, 1]);
  });
});

test('pipeline steps and finishActive show at once', async () => {
  const e = await newExecution({ job_id: pipelineJob.id, job_name: pipelineJob.name, job_type: 'pipeline', file_name: pipelineJob.file_name });
  await afterWrite('upsertStep', () => a.store.upsertStep({ exec_id: e.exec_id, step_id: 'load', type: 'log', status: 'running', start_time: startTime() }), (page) => {
    assert.equal(page.find((x) => x.exec_id === e.exec_id).status_map.running, 1);
  });
  await afterWrite('finishActive', () => a.store.finishActive(e.exec_id, 'cancelled', startTime()), (page) => {
    const m = page.find((x) => x.exec_id === e.exec_id).status_map;
    assert.deepEqual([m.running, m.cancelled], [0, 1]);
  });
  await afterWrite('updateExecution (build)', () => a.store.updateExecution(e.exec_id, { build: { models: 3 } }), (page) => {
    assert.deepEqual(page.find((x) => x.exec_id === e.exec_id).build, { models: 3 });
  });
  await afterWrite('updateExecution (queued → cancelled)', () => a.store.updateExecution(e.exec_id, { status: 'cancelled', error: 'stop' }), (page) => {
    assert.deepEqual([page.find((x) => x.exec_id === e.exec_id).status, page.find((x) => x.exec_id === e.exec_id).error], ['cancelled', 'stop']);
  });
});

test('restart recovery (markRunningInterrupted) shows at once', async () => {
  const e = await newExecution();
  await a.store.claimNextQueued();
  assert.equal((await byId(e.exec_id)).status, 'running');
  await afterWrite('markRunningInterrupted', () => a.store.markRunningInterrupted(startTime(), 'daemon stopped'), (page) => {
    assert.deepEqual([page.find((x) => x.exec_id === e.exec_id).status, page.find((x) => x.exec_id === e.exec_id).error], ['interrupted', 'daemon stopped']);
  });
});

test('a commit by another connection to the same file (another process, an operator command) shows at once', async () => {
  const other = openSqliteStore(`${a.base}/state.db`);
  try {
    let created: ExecutionRecord;
    await afterWrite('another connection: createExecution', async () => {
      created = await other.createExecution({ project_id: a.acme.id, job_id: job.id, job_name: job.name, job_type: 'query', file_name: job.file_name, trigger: 'schedule', start_time: startTime() });
    }, (page) => assert.equal(page[0].exec_id, created.exec_id));
    await afterWrite('another connection: updateExecution', () => other.updateExecution(created.exec_id, { status: 'skipped', error: 'skipped by test' }), (page) => {
      assert.deepEqual([page[0].status, page[0].error], ['skipped', 'skipped by test']);
    });
  } finally {
    await other.close();
  }
});

test('pages are per project and per query: another token or another filter never gets this page', async () => {
  const mine = await list();
  assert.ok(mine.length > 0);
  assert.deepEqual(await list(PATH, a.beta.token), []);
  const filtered = await list(`/execution/list?limit=100&filters=${encodeURIComponent(JSON.stringify({ status: 'skipped' }))}`);
  assert.ok(filtered.length > 0 && filtered.every((e) => e.status === 'skipped'));
  const asc = await list('/execution/list?limit=100&order=asc');
  assert.deepEqual(asc.map((e) => e.exec_id), mine.map((e) => e.exec_id).reverse());
  // Bad queries still answer 400 with the documented message, cached page or not.
  const bad = await rawList('/execution/list?limit=0');
  assert.equal(bad.status, 400);
  assert.deepEqual(JSON.parse(bad.text), { error: 'limit must be an integer between 1 and 100', code: 'bad_request' });
});

test('PageCache: another token drops every entry; a value read under an older token is not kept; bounds hold', () => {
  const c = new PageCache({ maxEntries: 2, maxBytes: 100 });
  const b = (text: string) => Buffer.from(text);
  assert.equal(c.get('1', 'a'), undefined);
  assert.equal(c.put('1', 'a', b('{"x":1}')).toString(), '{"x":1}');
  assert.equal(c.get('1', 'a')?.toString(), '{"x":1}');
  assert.equal(c.get('2', 'a'), undefined, 'a new token invalidates');
  assert.equal(c.size, 0);
  c.put('1', 'a', b('{"x":1}')); // read under the old token, after the new one was seen
  assert.equal(c.get('2', 'a'), undefined);
  c.put('2', 'a', b('1'));
  c.put('2', 'b', b('2'));
  c.put('2', 'c', b('3'));
  assert.equal(c.size, 2);
  assert.equal(c.get('2', 'a'), undefined, 'the oldest entry went first');
  assert.equal(c.put('2', 'big', b('x'.repeat(200))).length, 200);
  assert.equal(c.get('2', 'big'), undefined, 'a body over maxBytes is not kept');
  assert.equal(c.put(undefined, 'a', b('1')).toString(), '1');
  assert.equal(c.get(undefined, 'a'), undefined, 'no token, no caching');
});

test('the SQLite change token: changes with every write of this connection at once and every commit of another from the next turn of the event loop, not with reads', async () => {
  const t0 = a.store.changeToken();
  assert.ok(t0 !== undefined);
  await a.store.listExecutions({ projectId: a.acme.id, order: 'desc', limit: 5 });
  assert.equal(a.store.changeToken(), t0);
  const e = await newExecution();
  await a.store.upsertTask({ exec_id: e.exec_id, task_id: 'task_9', stream_name: 'q.sql', mode: 'query', status: 'running' });
  const tBefore = a.store.changeToken();
  // The append itself must succeed and be the write that moves the token.
  await a.store.appendTaskOutput(e.exec_id, 'task_9', 'x');
  const t1 = a.store.changeToken();
  assert.notEqual(t1, tBefore, 'an output append is a write');
  assert.equal((await a.store.listTasks(e.exec_id))[0]!.output, 'x');
  const other = openSqliteStore(`${a.base}/state.db`);
  try {
    await other.setWatermark('t', 'm', 'v');
  } finally {
    await other.close();
  }
  // The data version is read once per turn of the event loop.
  await new Promise((r) => setImmediate(r));
  assert.notEqual(a.store.changeToken(), t1);
  // Each write of this connection, even within one turn.
  const t2 = a.store.changeToken();
  await a.store.setWatermark('t', 'm', 'w');
  assert.notEqual(a.store.changeToken(), t2);
  // A transaction that only reads is no write: a claim with no free slot.
  const t3 = a.store.changeToken();
  assert.equal(await a.store.claimNextQueued({ maxRunning: 0 }), undefined);
  assert.equal(a.store.changeToken(), t3);
});
