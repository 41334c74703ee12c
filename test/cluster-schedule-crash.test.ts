/**
 * A daemon that dies right after creating a scheduled execution leaves
 * nothing for a survivor to fire again (docs/cluster.md, "Schedules and the
 * git poller"): the execution and its record on the schedule claim are one
 * statement. A test hook (SERVICE_TEST_KILL_AFTER_SCHEDULED_RUN, read only
 * by daemon/start-daemon.ts for this test) kills the daemon at that moment; its
 * scheduler runs 30x fast so an every-minute job fires within seconds. The
 * survivor takes the dead daemon over and runs the queued execution (or
 * marks it interrupted when the dead daemon had already started it): one
 * execution for the claimed due time, recorded on the claim — not a second
 * one fired for a claim that looked unfulfilled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requirePg } from './helpers/pg.js';
import { TestCluster, until } from './helpers/cluster.js';

test('a daemon killed right after creating a scheduled execution: the survivor runs that execution and fires the due time no second time', { timeout: 60_000 }, async (t) => {
  if (!(await requirePg(t))) return;
  const c = await TestCluster.create({ nodes: 2, leaseSeconds: 1 });
  try {
    await c.start(0, { SERVICE_TEST_KILL_AFTER_SCHEDULED_RUN: '1', SERVICE_SCHEDULER_CLOCK: `${Date.now()}:30` });
    const api = c.api(0);
    await api.post('/project/file/save', { file: { name: 'q.sql', body: '-- connection: WAREHOUSE\nselect 1 as x\n' } });
    await api.post('/project/job/save', { job: { name: 'every-minute', type: 'query', file_name: 'q.sql', schedules: ['* * * * *'], active: true } });
    const child = c.nodes[0]!.child!;
    const code = await until(async () => child.signalCode ?? child.exitCode ?? undefined, 20_000, 'the daemon to die after its scheduled run');
    assert.equal(code, 'SIGKILL', c.nodes[0]!.log);
    c.nodes[0]!.child = undefined;
    const claims = await c.sql('state', 'SELECT due_time, exec_id FROM schedule_claims');
    assert.equal(claims.length, 1, JSON.stringify(claims));
    assert.ok(claims[0].exec_id, 'the claim names its execution');

    await c.start(1);
    const done = await until(async () => {
      const e = await c.api(1).exec(claims[0].exec_id);
      return e && e.status !== 'queued' && e.status !== 'running' ? e : undefined;
    }, 20_000, 'the survivor to run the queued scheduled execution');
    // The dead daemon may have started it in the instant before the kill: then the survivor marks it
    // interrupted (the job allows no retry) instead of running it. Either way it is final, and once.
    assert.ok(done.status === 'success' || done.status === 'interrupted', JSON.stringify(done));
    // Beats enough for the survivor to have fenced the dead daemon and looked for orphan claims.
    await until(async () => ((await c.sql('state', 'SELECT 1 FROM daemons WHERE fenced_by IS NOT NULL')).length > 0 ? true : undefined), 10_000, 'the dead daemon to be fenced');
    await new Promise((r) => setTimeout(r, 1500));
    const scheduled = await c.sql('state', "SELECT exec_id FROM executions WHERE triggered_by = 'schedule' ORDER BY exec_id");
    const recorded = await c.sql('state', 'SELECT exec_id FROM schedule_claims WHERE due_time = $1', [claims[0].due_time]);
    assert.deepEqual(recorded.map((r) => r.exec_id), [claims[0].exec_id], 'the claim still names the first execution');
    const other = await c.sql('state', 'SELECT exec_id FROM schedule_claims WHERE due_time <> $1', [claims[0].due_time]);
    assert.deepEqual(scheduled.map((r) => r.exec_id).sort(), [claims[0].exec_id, ...other.map((r) => r.exec_id)].sort(), 'every scheduled execution fulfils one claim: none fired twice');
  } finally {
    await c.close();
  }
});
