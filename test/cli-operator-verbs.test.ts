// The operator verbs `service token list|revoke` and `service project delete`:
// a revoked token is refused by a running daemon, and a deleted project leaves
// nothing behind in the store (SQLite and PostgreSQL) nor in the data dir.
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { sha256hex } from '../engine/state/ids.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import type { StateStore } from '../engine/state/store.js';
import { runMain, startCliDaemon, withEnv, type CliDaemon } from './helpers/cli-daemon.js';
import { createTempDatabase, pgAvailable, type TempDatabase } from './helpers/pg.js';

let d: CliDaemon | undefined;
let base = '';

before(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'service-operator-verbs-'));
});

after(async () => {
  await d?.close();
  await rm(base, { recursive: true, force: true });
});

async function needPg(t: TestContext): Promise<boolean> {
  if (await pgAvailable()) return true;
  if (process.env.CI === 'true') assert.fail('PostgreSQL is unreachable at 127.0.0.1:5432 and CI=true');
  t.skip('PostgreSQL is unreachable at 127.0.0.1:5432');
  return false;
}

const UNAUTHORIZED = 'error: missing or invalid project token (unauthorized)\n';

test('token list shows ids (never tokens); a revoked token is refused by the running daemon, the others still work', async (t) => {
  if (!(await needPg(t))) return;
  d = await startCliDaemon();
  const store = ['--data-dir', d.dataDir];
  const second = await runMain(['token', 'create', '--project', 'acme', '--label', 'second', ...store]);
  assert.equal(second.code, 0, second.err);
  const token2 = second.out.trim();

  const table = await runMain(['token', 'list', ...store]);
  assert.equal(table.code, 0, table.err);
  const lines = table.out.trimEnd().split('\n');
  assert.match(lines[0]!, /^ID +PROJECT +LABEL +CREATED$/);
  assert.equal(lines.length, 3);
  assert.ok(!table.out.includes(d.token) && !table.out.includes(token2), 'the tokens themselves are never listed');
  const id2 = sha256hex(token2).slice(0, 12);
  assert.match(table.out, new RegExp(`^${id2} +acme +second +\\d{4}-\\d\\d-\\d\\dT`, 'm'));

  const json = await runMain(['token', 'list', '--project', 'acme', '-o', 'json', ...store]);
  assert.equal(json.code, 0, json.err);
  const listed = JSON.parse(json.out) as { tokens: { id: string; project: string; project_id: string; label: string }[] };
  assert.deepEqual(listed.tokens.map((x) => [x.id, x.project, x.project_id, x.label]).sort(), [
    [sha256hex(d.token).slice(0, 12), 'acme', d.projectId, 'cli tests'],
    [id2, 'acme', d.projectId, 'second'],
  ].sort());

  // Both work before the revoke (the daemon has seen token2: it is in its cache).
  assert.equal((await withEnv({ SERVICE_PROJECT_TOKEN: token2 }, () => d!.cli(['jobs', 'list']))).code, 0);
  const revoked = await runMain(['token', 'revoke', id2, ...store]);
  assert.deepEqual(revoked, { code: 0, out: `revoked ${id2}\n`, err: '' });
  const refused = await d.cli(['jobs', 'list'], { SERVICE_PROJECT_TOKEN: token2 });
  assert.deepEqual(refused, { code: 1, out: '', err: UNAUTHORIZED });
  assert.equal((await d.cli(['jobs', 'list'])).code, 0, 'the other token still works');
  const after = JSON.parse((await runMain(['token', 'list', '-o', 'json', ...store])).out) as { tokens: { id: string }[] };
  assert.deepEqual(after.tokens.map((x) => x.id), [sha256hex(d.token).slice(0, 12)]);

  assert.deepEqual(await runMain(['token', 'revoke', id2, ...store]), { code: 1, out: '', err: `fatal: token ${id2} not found\n` });
  const bad = await runMain(['token', 'revoke', 'xyz', ...store]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: invalid token id "xyz": expected the 12 hex digits service token list shows\n/);
  const badOut = await runMain(['token', 'list', '-o', 'yaml', ...store]);
  assert.equal(badOut.code, 2);
  assert.match(badOut.err, /invalid argument "yaml" for "-o, --output"/);
  assert.deepEqual(await runMain(['token', 'list', '--project', 'nope', ...store]), { code: 1, out: '', err: 'fatal: project "nope" not found\n' });
});

/** A project `beta` with a token, a job and one execution (with a task and its output) in `status`. */
async function seedProject(storeFlags: string[], status: 'running' | 'success'): Promise<{ id: string; digest: string }> {
  const created = await runMain(['project', 'create', 'beta', ...storeFlags]);
  assert.equal(created.code, 0, created.err);
  const id = created.out.trim();
  const token = await runMain(['token', 'create', '--project', 'beta', ...storeFlags]);
  assert.equal(token.code, 0, token.err);
  const s = await open(storeFlags);
  try {
    const job = await s.createJob({ project_id: id, name: 'j', type: 'query', file_name: 'q.sql', description: '', active: true, default: true, streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 1 } });
    const e = await s.createExecution({ project_id: id, job_id: job.id, job_name: 'j', job_type: 'query', file_name: 'q.sql', trigger: 'manual', status, start_time: new Date().toISOString(), end_time: status === 'running' ? null : new Date().toISOString() });
    await s.upsertTask({ exec_id: e.exec_id, task_id: 'task_1', stream_name: 'q.sql', mode: 'query', status });
    await s.appendTaskOutput(e.exec_id, 'task_1', 'some output\n');
  } finally {
    await s.close();
  }
  return { id, digest: sha256hex(token.out.trim()) };
}

async function open(storeFlags: string[]): Promise<StateStore> {
  const i = storeFlags.indexOf('--state');
  return openStateStore(i >= 0 ? storeFlags[i + 1]! : path.join(storeFlags[storeFlags.indexOf('--data-dir') + 1]!, 'state.db'));
}

async function deleteCycle(storeFlags: string[], dataDir: string): Promise<void> {
  const keep = await runMain(['project', 'create', 'keep', ...storeFlags]);
  assert.equal(keep.code, 0, keep.err);
  const { id, digest } = await seedProject(storeFlags, 'running');
  assert.ok(existsSync(projectPaths(dataDir, id).files));

  const refused = await runMain(['project', 'delete', 'beta', ...storeFlags]);
  assert.deepEqual(refused, { code: 1, out: '', err: `fatal: project ${id} has 1 queued or running execution: cancel it first (service execs cancel)\n` });
  assert.ok(existsSync(projectPaths(dataDir, id).dir), 'nothing is removed when refused');

  const s = await open(storeFlags);
  try {
    const [e] = await s.listExecutions({ projectId: id, order: 'asc', limit: 10 });
    await s.updateExecution(e!.exec_id, { status: 'cancelled', end_time: new Date().toISOString() });
  } finally {
    await s.close();
  }
  assert.deepEqual(await runMain(['project', 'delete', 'beta', ...storeFlags]), { code: 0, out: `deleted ${id}\n`, err: '' });
  assert.ok(!existsSync(projectPaths(dataDir, id).dir), 'the project directory is gone');
  const list = await runMain(['project', 'list', ...storeFlags]);
  assert.doesNotMatch(list.out, /beta/);
  assert.match(list.out, /keep/);
  const after = await open(storeFlags);
  try {
    assert.equal(await after.projectIdForToken(digest), undefined, "the project's tokens are gone");
    assert.equal(await after.getProject(id), undefined);
    assert.deepEqual((await after.listJobs(id)), []);
    assert.deepEqual(await after.listExecutions({ projectId: id, order: 'asc', limit: 10 }), []);
  } finally {
    await after.close();
  }
  assert.deepEqual(await runMain(['project', 'delete', 'beta', ...storeFlags]), { code: 1, out: '', err: 'fatal: project "beta" not found\n' });
  // The name is free again.
  assert.equal((await runMain(['project', 'create', 'beta', ...storeFlags])).code, 0);
}

test('project delete (SQLite store): refused while an execution runs, then removes records and directory', async () => {
  const dataDir = path.join(base, 'sqlite');
  await deleteCycle(['--data-dir', dataDir], dataDir);
});

test('project delete and token revoke (PostgreSQL store)', async (t) => {
  if (!(await needPg(t))) return;
  const db: TempDatabase = await createTempDatabase('operator_verbs');
  try {
    const dataDir = path.join(base, 'pg');
    const flags = ['--data-dir', dataDir, '--state', db.url];
    await deleteCycle(flags, dataDir);
    const made = await runMain(['token', 'create', '--project', 'keep', ...flags]);
    const digest = sha256hex(made.out.trim());
    const s = await open(flags);
    try {
      assert.ok(await s.projectIdForToken(digest));
      assert.equal((await runMain(['token', 'revoke', digest.slice(0, 12), ...flags])).code, 0);
      assert.equal(await s.projectIdForToken(digest), undefined);
    } finally {
      await s.close();
    }
  } finally {
    await db.drop();
  }
});
