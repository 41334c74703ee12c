/**
 * The scheduler: an active job fires when one of its
 * expressions matches in its timezone, once per matching minute; inactive
 * or unscheduled jobs never fire; fires before the scheduler started are
 * not made up. The clock is injected: nothing sleeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dueJobs, Scheduler } from '../actors/daemon/scheduler.js';
import { memoryLogger } from '../engine/log.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import type { JobRecord, NewJob } from '../engine/state/store.js';

const config = { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 };
const newJob = (over: Partial<NewJob>): NewJob => ({
  project_id: 'p',
  name: 'j',
  type: 'query',
  file_name: 'q.sql',
  description: '',
  active: true,
  default: false,
  streams: [],
  tags: [],
  schedules: [],
  timezone: 'UTC',
  policy: 'queue',
  config,
  ...over,
});
const asJob = (id: string, over: Partial<NewJob>): JobRecord => ({ ...newJob(over), id, created: '', updated: '' });

test('dueJobs: matching minute in the job timezone; inactive and unscheduled never', () => {
  const jobs = [
    asJob('hourly', { schedules: ['0 * * * *'] }),
    asJob('berlin', { schedules: ['0 2 * * *'], timezone: 'Europe/Berlin' }),
    asJob('inactive', { schedules: ['* * * * *'], active: false }),
    asJob('unscheduled', {}),
  ];
  const ids = (since: string, now: string) => dueJobs(jobs, new Date(since), new Date(now)).map((j) => j.id);
  assert.deepEqual(ids('2025-03-01T00:30:00Z', '2025-03-01T00:45:00Z'), []);
  assert.deepEqual(ids('2025-03-01T00:45:00Z', '2025-03-01T01:00:00Z'), ['hourly', 'berlin']); // 02:00 in Berlin
  assert.deepEqual(ids('2025-03-01T01:00:00Z', '2025-03-01T01:00:30Z'), []); // same minute fires once
  assert.deepEqual(ids('2025-03-01T01:00:30Z', '2025-03-01T02:00:00Z'), ['hourly']);
});

test('Scheduler fires a due job through run() once the clock reaches it, not before start', async () => {
  const store = await openStateStore(join(mkdtempSync(join(tmpdir(), 'svc-sched-')), 'state.db'));
  const p = await store.createProject({ name: 'acme' });
  const hourly = await store.createJob(newJob({ project_id: p.id, schedules: ['0 * * * *'] }));
  let now = new Date('2025-03-01T01:00:00.000Z'); // a fire at start time is not made up
  const fired: string[] = [];
  let wake: () => void = () => {};
  const s = new Scheduler({ store, logger: memoryLogger(), now: () => now, run: async (j) => void (fired.push(j.id), wake()) });
  const keepAlive = setInterval(() => {}, 1000); // the scheduler's timer is unref'd: the daemon's server keeps the loop alive
  try {
    s.start();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(fired, []);
    now = new Date('2025-03-01T02:00:00.000Z');
    const firedOnce = new Promise<void>((r) => (wake = r));
    s.refresh();
    await firedOnce;
    assert.deepEqual(fired, [hourly.id]);
  } finally {
    clearInterval(keepAlive);
    await s.stop();
    await store.close();
  }
});

test('a refresh while a tick is firing waits for it: the due time fires once, not once per tick', async () => {
  const store = await openStateStore(join(mkdtempSync(join(tmpdir(), 'svc-sched-')), 'state.db'));
  const p = await store.createProject({ name: 'acme' });
  const hourly = await store.createJob(newJob({ project_id: p.id, schedules: ['0 * * * *'] }));
  let now = new Date('2025-03-01T01:30:00.000Z');
  const fired: string[] = [];
  let release: () => void = () => {};
  let started: () => void = () => {};
  const firing = new Promise<void>((r) => (started = r));
  const s = new Scheduler({
    store,
    logger: memoryLogger(),
    now: () => now,
    run: async (j) => {
      fired.push(j.id);
      started();
      await new Promise<void>((r) => (release = r)); // a slow fire: the tick is still running
    },
  });
  const keepAlive = setInterval(() => {}, 1000);
  try {
    s.start();
    await new Promise((r) => setTimeout(r, 50));
    now = new Date('2025-03-01T02:00:30.000Z');
    s.refresh();
    await firing;
    s.refresh(); // a job saved meanwhile
    s.refresh();
    await new Promise((r) => setTimeout(r, 100));
    release();
    await new Promise((r) => setTimeout(r, 100));
    release();
    assert.deepEqual(fired, [hourly.id]);
  } finally {
    clearInterval(keepAlive);
    await s.stop();
    await store.close();
  }
});
