/**
 * The daemon as a real process: `kill -9` during a long
 * query leaves the execution `interrupted` at the next start with every
 * saved file, job and finished execution intact; SIGTERM waits for the
 * grace period, cancels the rest, and exits 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTempDatabase, requirePg } from './helpers/pg.js';
import { activeQueries, daemonFixture as fixture, projectClient as client, startDaemonChild as startDaemon, until } from './helpers/daemon-child.js';

const activeSleeps = (db: string) => activeQueries(db, 'pg_sleep(60)');

test('kill -9 during a query: the execution is interrupted after restart, everything saved is intact', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_crash');
  try {
    const { dataDir, token } = await fixture(db.url);
    let d = await startDaemon(dataDir);
    let api = client(d.url, token);
    await api.post('/project/file/save', { file: { name: 'queries/quick.sql', body: '-- connection: WAREHOUSE\nselect 1 as x;\n' } });
    const slowSave = await api.post('/project/file/save', { file: { name: 'queries/slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60);\n' } });
    const quickJob = (await api.post('/project/job/list', { name: 'quick' })).jobs[0].id as string;
    const quick = (await api.post('/project/job/run', { job_id: quickJob })).exec_id as string;
    await until(async () => ((await api.exec(quick)).status === 'success' ? true : undefined), 'the quick run');
    const slow = (await api.post('/project/job/run', { job_id: slowSave.default_job_id })).exec_id as string;
    await until(async () => ((await activeSleeps(db.name)) > 0 ? true : undefined), 'the slow query to start');
    d.child.kill('SIGKILL');
    await d.exited;
    d = await startDaemon(dataDir);
    api = client(d.url, token);
    const e = await api.exec(slow);
    assert.equal(e.status, 'interrupted');
    assert.equal(e.error, 'the daemon stopped while the execution was running');
    assert.ok(e.end_time);
    const tasks = (await api.post('/execution/replication-tasks', { exec_id: slow, exclude_output: true })).tasks;
    assert.equal(tasks[0].status, 'interrupted');
    assert.equal((await api.exec(quick)).status, 'success');
    const files = (await api.post('/project/file/list', {})).files.map((f: { name: string }) => f.name);
    assert.deepEqual(files, ['queries', 'queries/quick.sql', 'queries/slow.sql']);
    assert.equal((await api.post('/project/job/list', {})).jobs.length, 2);
    d.child.kill('SIGTERM');
    assert.equal(await d.exited, 0);
  } finally {
    await db.drop();
  }
});

test('SIGTERM: running executions get the grace period, then are cancelled; exit 0', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_term');
  try {
    const { dataDir, token } = await fixture(db.url);
    const d = await startDaemon(dataDir, ['--grace-period', '1s']);
    const api = client(d.url, token);
    const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(60);\n' } });
    const exec = (await api.post('/project/job/run', { job_id: saved.default_job_id })).exec_id as string;
    await until(async () => ((await activeSleeps(db.name)) > 0 ? true : undefined), 'the slow query to start');
    d.child.kill('SIGTERM');
    assert.equal(await d.exited, 0);
    assert.equal(await activeSleeps(db.name), 0);
    const again = await startDaemon(dataDir);
    const e = await client(again.url, token).exec(exec);
    assert.equal(e.status, 'cancelled');
    assert.equal(e.error, 'cancelled: daemon shutdown');
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  } finally {
    await db.drop();
  }
});
