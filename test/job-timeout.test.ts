/**
 * `config.timeout`: an execution running past its job's
 * timeout is stopped like a cancel — the statement is cancelled in
 * PostgreSQL — and ends `error` with `execution timed out after <n> s`.
 * Checked for a query job (tasks) and a pipeline (steps).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { eventually, fixtureEnv, startApiServer, type ApiServer } from './helpers/api-server.js';
import { createTempDatabase, PG_ADMIN_URL, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';

let api: ApiServer;
let db: TempDatabase;
let ready = false;
before(async () => {
  if (!(await pgAvailable())) return;
  db = await createTempDatabase('svc_timeout');
  api = await startApiServer({ acmeEnv: fixtureEnv(db.url) });
  ready = true;
});
after(async () => {
  if (!ready) return;
  await api.close();
  await db.drop();
});

async function sleepers(): Promise<number> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return (await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and state = 'active' and query like '%pg_sleep(30)%' and pid <> pg_backend_pid()", [db.name])).rows[0].n;
  } finally {
    await c.end();
  }
}

async function runWithTimeout(name: string, body: string): Promise<any> {
  const saved = await api.request('POST', '/project/file/save', { body: { file: { name, body } } });
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  const job = (await api.request('GET', `/project/job/get?job_id=${saved.body.default_job_id}`)).body;
  const updated = await api.request('POST', '/project/job/save', { body: { job: { ...job, config: { ...job.config, timeout: 2 } } } });
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  const execId = (await api.request('POST', '/project/job/run', { body: { job_id: job.id } })).body.exec_id;
  await eventually(async () => ((await sleepers()) > 0 ? true : undefined), 10_000, 'the statement to start');
  const done = await eventually(
    async () => {
      const e = (await api.request('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: execId }))}`)).body.executions[0];
      return e.status === 'running' || e.status === 'queued' ? undefined : e;
    },
    15_000,
    'the execution to time out',
  );
  // The statement was cancelled in the database, not left to run its 30 s.
  await eventually(async () => ((await sleepers()) === 0 ? true : undefined), 5_000, 'the backend to stop');
  return done;
}

test('a query job past config.timeout ends error "execution timed out after 2 s", its statement cancelled', async (t) => {
  if (!(await requirePg(t))) return;
  const e = await runWithTimeout('slow.sql', '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(30);\n');
  assert.equal(e.status, 'error');
  assert.equal(e.error, 'execution timed out after 2 s');
  assert.ok(e.duration < 10, `duration ${e.duration}`);
});

test('a pipeline past config.timeout: the running query step is cancelled, the execution ends error', async (t) => {
  if (!(await requirePg(t))) return;
  const e = await runWithTimeout('slow-pipe.yaml', 'steps:\n  - {id: q, type: query, connection: WAREHOUSE, query: "select pg_sleep(30)"}\n  - log: never\n');
  assert.equal(e.status, 'error');
  assert.equal(e.error, 'execution timed out after 2 s');
  const steps = (await api.request('POST', '/execution/pipeline-steps', { body: { exec_id: e.exec_id } })).body.steps;
  assert.ok(!steps.some((s: { step_id: string }) => s.step_id === 'never' || s.step_id === 'step_2'), JSON.stringify(steps));
});

test('the daemon log has a line per state change of an execution, the cancel included', async (t) => {
  if (!(await requirePg(t))) return;
  const saved = await api.request('POST', '/project/file/save', { body: { file: { name: 'slow-log.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(30);\n' } } });
  const execId = (await api.request('POST', '/project/job/run', { body: { job_id: saved.body.default_job_id } })).body.exec_id as string;
  await eventually(async () => ((await sleepers()) > 0 ? true : undefined), 10_000, 'the statement to start');
  const cancel = await api.request('POST', '/execution/cancel', { body: { exec_id: execId } });
  assert.equal(cancel.status, 200);
  await eventually(async () => ((await sleepers()) === 0 ? true : undefined), 5_000, 'the backend to stop');
  const mine = api.logs.filter((l) => l.includes(`execution ${execId}`)).map((l) => l.replace(execId, 'X').replace(saved.body.default_job_id, 'J'));
  assert.deepEqual(mine.slice(0, 3), ['info execution X queued (job J, api)', 'info execution X running (job J)', 'info execution X cancelled (job J): cancelled by request']);
});
