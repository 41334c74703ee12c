/**
 * A saved schedule takes effect at once (actors/daemon/scheduler.ts): the
 * daemon's scheduler, asleep for up to a minute, is woken by the job save
 * and plans its next look for the new schedule's first fire. Observed
 * through the scheduler's planned wake-up (no waiting for a fire): before
 * the save it is a minute after the last look (no schedules); after the
 * save of an every-minute job it is that job's next whole minute; after the
 * job is deactivated it is a minute after a look again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseServeFlags } from '../cli/daemon-flags.js';
import { startDaemon } from '../daemon/start-daemon.js';
import { nextRun } from '../engine/jobs/cron.js';
import { daemonFixture, projectClient } from './helpers/daemon-child.js';
import { until } from './helpers/cluster.js';

test('saving and deactivating a scheduled job wakes the scheduler: its next wake-up follows the schedule at once', { timeout: 30_000 }, async () => {
  const { dataDir, token } = await daemonFixture('postgresql://unused@127.0.0.1:1/unused');
  const daemon = await startDaemon(parseServeFlags(['--data-dir', dataDir, '--port', '0']), { log: () => {}, enabled: () => false });
  try {
    const api = projectClient(daemon.url, token);
    const first = await until(async () => daemon.scheduler.nextWake, 5000, 'the first look');
    const saved = await api.post('/project/file/save', { file: { name: 'q.sql', body: '-- connection: WAREHOUSE\nselect 1 as x\n' } });
    assert.ok(saved.default_job_id, JSON.stringify(saved));
    const job = { name: 'every-minute', type: 'query', file_name: 'q.sql', schedules: ['* * * * *'], active: true };
    const created = await api.post('/project/job/save', { job });
    assert.ok(created.id, JSON.stringify(created));
    const planned = await until(async () => {
      const w = daemon.scheduler.nextWake!;
      return w.getTime() !== first.getTime() && w.getTime() % 60_000 === 0 ? w : undefined;
    }, 5000, 'the scheduler to plan the every-minute fire');
    // The next whole minute after the look that the save triggered: the schedule's first fire.
    assert.equal(planned.getTime(), nextRun(['* * * * *'], 'UTC', new Date(planned.getTime() - 60_000))!.getTime());
    assert.ok(planned.getTime() - first.getTime() < 60_000, 'earlier than the look planned before the save');

    await api.post('/project/job/save', { job: { ...job, id: created.id, active: false } });
    await until(async () => (daemon.scheduler.nextWake!.getTime() % 60_000 !== 0 ? true : undefined), 5000, 'the scheduler to drop the deactivated schedule');
  } finally {
    await daemon.stop(true);
  }
});
