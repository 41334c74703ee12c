/**
 * Fencing in cluster mode: once a survivor has taken a daemon
 * over, the writes that daemon's sessions make to execution records are
 * refused by the database, whatever the daemon believes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClusterDb } from '../engine/cluster/cluster-db.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('a fenced daemon\'s writes to executions, tasks and output are refused; a live one\'s go through', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_fence');
  const stale = await openStateStore(db.url, { daemonId: 'daemon-a' });
  const fresh = await openStateStore(db.url, { daemonId: 'daemon-b' });
  const a = ClusterDb.open(db.url, 'daemon-a');
  const b = ClusterDb.open(db.url, 'daemon-b');
  try {
    const info = { node: 'n', host: 'h', pid: 1, version: 'test', url: null, maxRunning: 2, leaseMs: 60_000 };
    await a.register({ ...info, id: 'daemon-a', node: 'node-a' });
    await b.register({ ...info, id: 'daemon-b', node: 'node-b' });
    const p = await stale.createProject({ name: 'acme' });
    const job = await stale.createJob({ project_id: p.id, name: 'j', type: 'query', file_name: 'q.sql', description: '', active: true, default: true, streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 1 } });
    const e = await stale.createExecution({ project_id: p.id, job_id: job.id, job_name: 'j', job_type: 'query', file_name: 'q.sql', trigger: 'api', start_time: new Date().toISOString() });
    assert.equal((await stale.claimNextQueued({ owner: 'daemon-a' }))?.exec_id, e.exec_id);
    await stale.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'running' });

    // daemon-a is declared dead: the same node started again (the data-directory lock proves it), here node-a's fresh start.
    const c = ClusterDb.open(db.url, 'daemon-c');
    await c.register({ ...info, id: 'daemon-c', node: 'node-a' });
    assert.deepEqual(await c.fenceDead('node-a', null), ['daemon-a']);
    assert.deepEqual((await c.takeOver('daemon-c')).map((x) => x.outcome), ['requeued'], 'retries allow a second attempt');
    assert.deepEqual(await a.heartbeat(1000), { fenced: true }, 'the fenced daemon learns it at its next heartbeat');
    // The second attempt runs on daemon-b.
    assert.equal((await fresh.claimNextQueued({ owner: 'daemon-b' }))?.exec_id, e.exec_id);
    assert.equal((await b.pool.query('SELECT attempt FROM executions WHERE exec_id = $1', [e.exec_id])).rows[0].attempt, 2, 'the second claim is attempt 2');
    const claimed = await fresh.findExecution(e.exec_id);
    assert.equal(claimed?.status, 'running');
    assert.equal(claimed?.daemon, 'daemon-b');

    const refused = /daemon daemon-a lost its lease and was taken over by daemon-c: its writes are refused/;
    await assert.rejects(stale.updateExecution(e.exec_id, { status: 'error', error: 'stale result' }), refused);
    await assert.rejects(stale.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'success' }), refused);
    await fresh.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 's', mode: 'm', status: 'running' });
    await assert.rejects(stale.appendTaskOutput(e.exec_id, 'task_1', 'late line\n'), refused);
    await fresh.appendTaskOutput(e.exec_id, 'task_1', 'attempt 2\n');
    assert.equal((await fresh.updateExecution(e.exec_id, { status: 'success' })), true);
    const end = await fresh.findExecution(e.exec_id);
    assert.equal(end?.status, 'success');
    assert.equal((await fresh.listTasks(e.exec_id))[0]?.output, 'attempt 2\n');
    await c.close();
  } finally {
    await a.close();
    await b.close();
    await stale.close();
    await fresh.close();
    await db.drop();
  }
});
