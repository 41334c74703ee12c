// Automatic git polling: the schedule as a pure
// function of the projects' settings and an injected clock, then the
// GitPoller with the real pull against a local bare repository — first poll
// at start, a pushed commit picked up at the interval, settings changes
// seen at the next tick, disabled projects left alone, and a stop that
// aborts a fetch in flight without recording it as the remote's failure.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { within } from './helpers/within.js';
import { GitPoller, planPolls, type PollState } from '../actors/daemon/git-poller.js';
import type { GitRecord, ProjectRecord } from '../engine/state/store.js';
import { eventually, startApiServer, type ApiServer } from './helpers/api-server.js';
import { createGitRemote, startHttpGitServer, type GitRemoteRepo } from './helpers/git-remote.js';

const gitRecord = (over: Partial<GitRecord> = {}): GitRecord => ({ url: 'file:///r.git', branch: 'main', enabled: true, poll_interval: 60, last_sha: null, last_pull: null, last_error: null, ...over });
const project = (id: string, git: GitRecord | null): ProjectRecord => ({ id, name: id, git, created: '2025-01-01T00:00:00.000Z' });

test('planPolls: new projects are due at once, unchanged ones keep their due time, changed settings are due at once, others drop out', () => {
  const t0 = 1_000_000;
  const first = planPolls([project('a', gitRecord()), project('off', gitRecord({ enabled: false })), project('zero', gitRecord({ poll_interval: 0 })), project('none', null)], new Map(), t0);
  assert.deepEqual(first.due, ['a']);
  assert.deepEqual([...first.schedule.keys()], ['a']);
  const a = first.schedule.get('a')!;
  assert.equal(a.intervalMs, 60_000);
  a.dueAt = t0 + 60_000; // what the poller sets when the pull ends

  const later = planPolls([project('a', gitRecord({ last_sha: 'f'.repeat(40) }))], first.schedule, t0 + 30_000);
  assert.deepEqual(later.due, [], 'last_sha and friends are not settings');
  assert.equal(later.schedule.get('a'), a);
  assert.deepEqual(planPolls([project('a', gitRecord())], first.schedule, t0 + 60_000).due, ['a']);

  for (const change of [{ branch: 'dev' }, { url: 'file:///other.git' }, { poll_interval: 5 }]) {
    const next = planPolls([project('a', gitRecord(change))], first.schedule, t0 + 1);
    assert.deepEqual(next.due, ['a'], JSON.stringify(change));
    assert.equal((next.schedule.get('a') as PollState).dueAt, t0 + 1);
  }
  assert.deepEqual([...planPolls([project('a', gitRecord({ enabled: false }))], first.schedule, t0).schedule.keys()], []);
});

let api: ApiServer;
let remote: GitRemoteRepo;

before(async () => {
  api = await startApiServer();
  remote = await createGitRemote(api.base);
  await remote.commit({ 'README.md': 'v1\n' });
  await remote.commit({ 'README.md': 'dev\n' }, 'dev');
  await remote.commit({ 'README.md': 'v1\n' });
});

after(async () => {
  await api.close();
});

const readme = () => readFile(path.join(api.acme.root, 'README.md'), 'utf8').catch(() => null);

test('the poller pulls at start and at the interval, sees settings changes at the next tick, and leaves disabled projects alone', async () => {
  await api.store.updateProjectGit(api.acme.id, gitRecord({ url: remote.url, poll_interval: 1 }));
  const pulls: string[] = [];
  let clock = 1_000_000;
  // Driven by hand on its own clock: no real interval is waited for.
  const poller = new GitPoller({
    store: api.store,
    logger: { log: () => {}, enabled: () => true },
    manual: true,
    now: () => clock,
    pull: async (id, options) => {
      pulls.push(id);
      return api.git.pull(id, options);
    },
  });
  const tick = async () => {
    const started = await poller.tick();
    await poller.settled();
    return started;
  };
  poller.start();
  try {
    assert.deepEqual(await tick(), [api.acme.id], 'polled at start; beta has no git: never polled');
    assert.equal(await readme(), 'v1\n');

    await remote.commit({ 'README.md': 'v2\n' });
    clock += 999;
    assert.deepEqual(await tick(), [], 'not due before its interval');
    clock += 1;
    assert.deepEqual(await tick(), [api.acme.id], 'due one interval after the previous poll ended');
    assert.equal(await readme(), 'v2\n');
    assert.equal((await api.store.getProject(api.acme.id))!.git!.last_error, null);

    // A branch change is polled at the next tick, whatever the interval.
    await api.store.updateProjectGit(api.acme.id, { branch: 'dev', poll_interval: 3600 });
    assert.deepEqual(await tick(), [api.acme.id]);
    assert.equal(await readme(), 'dev\n');
    clock += 3_599_000;
    assert.deepEqual(await tick(), [], 'the new interval holds');

    await api.store.updateProjectGit(api.acme.id, { enabled: false, branch: 'main', poll_interval: 1 });
    clock += 10_000_000;
    assert.deepEqual(await tick(), [], 'no polls while disabled');
    assert.equal(await readme(), 'dev\n');
    assert.equal(pulls.length, 3);
  } finally {
    await poller.stop();
  }
});

test('stop aborts a fetch in flight and waits for it; the abort is not stored as the remote\'s failure', async () => {
  const server = await startHttpGitServer(path.dirname(remote.bare));
  server.mode = 'hang';
  await api.store.updateProjectGit(api.acme.id, { url: server.url(path.basename(remote.bare)), enabled: true, poll_interval: 1, last_error: 'earlier' });
  let started = false;
  const poller = new GitPoller({
    store: api.store,
    logger: { log: () => {}, enabled: () => true },
    tickMs: 50,
    pull: (id, options) => {
      started = true;
      return api.git.pull(id, options);
    },
  });
  try {
    poller.start();
    await eventually(async () => (started ? true : undefined), 2000, 'a poll to start');
    await within(poller.stop(), 3000, 'stop (it must not wait for the 120 s fetch limit)');
    assert.equal((await api.store.getProject(api.acme.id))!.git!.last_error, 'earlier');
  } finally {
    await server.close();
  }
});
