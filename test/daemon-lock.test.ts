/**
 * One daemon per data directory: a second `service serve` on a
 * served directory exits 1 at once naming the directory and the holder's pid,
 * and touches nothing — the first daemon's running execution is still running
 * and finishes normally. A lock left by a daemon killed with kill -9 is taken
 * over by the next start.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { lockDataDir } from '../engine/state/daemon-lock.js';
import { tempDir } from './helpers/build-cli.js';
import { activeQueries, BIN, daemonFixture, projectClient, startDaemonChild, until, type DaemonChild } from './helpers/daemon-child.js';
import { createTempDatabase, requirePg, type TempDatabase } from './helpers/pg.js';

function runSecond(dataDir: string, extra: string[] = []): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, err });
    });
  });
}

/** A daemon on a fresh data directory whose execution is running a 4 s query on `db`. */
async function servingASlowRun(db: TempDatabase) {
  const { dataDir, token } = await daemonFixture(db.url);
  const first = await startDaemonChild(dataDir);
  const api = projectClient(first.url, token);
  const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(4);\n' } });
  const exec = (await api.post('/project/job/run', { job_id: saved.default_job_id })).exec_id as string;
  await until(async () => ((await activeQueries(db.name, 'pg_sleep(4)')) > 0 ? true : undefined), 'the slow query to start');
  return { dataDir, token, first, api, exec };
}

/** The execution is still running (nobody interrupted it), and then ends in success. */
async function runsOnToSuccess(api: ReturnType<typeof projectClient>, exec: string): Promise<void> {
  assert.equal((await api.exec(exec)).status, 'running', "another daemon's start must not touch the running execution");
  const done = await until(async () => {
    const e = await api.exec(exec);
    return e.status === 'running' ? undefined : e;
  }, 'the slow execution to finish');
  assert.equal(done.status, 'success', JSON.stringify(done));
}

test('a second daemon on a served data directory exits 1 and leaves the running execution alone', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_lock');
  try {
    const { dataDir, token, first, api, exec } = await servingASlowRun(db);

    const second = await runSecond(dataDir);
    assert.equal(second.code, 1, second.err);
    assert.equal(second.err, `fatal: data directory ${dataDir} is in use by another daemon (pid ${first.child.pid})\n`);

    await runsOnToSuccess(api, exec);

    // kill -9 leaves no live holder: the next start takes the lock over and recovers.
    first.child.kill('SIGKILL');
    await first.exited;
    const third = await startDaemonChild(dataDir);
    assert.equal((await projectClient(third.url, token).exec(exec)).status, 'success');
    third.child.kill('SIGTERM');
    assert.equal(await third.exited, 0);
  } finally {
    await db.drop();
  }
});

test('a daemon on another data directory naming a served directory\'s state file exits 1 and leaves the running execution alone', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_lock_state');
  try {
    const { dataDir, first, api, exec } = await servingASlowRun(db);

    // Its own, free data directory, but the first daemon's state file (the default <data-dir>/state.db there).
    const other = tempDir('svc-lock-other-');
    const state = join(dataDir, 'state.db');
    const second = await runSecond(other, ['--state', state]);
    assert.equal(second.code, 1, second.err);
    assert.equal(second.err, `fatal: state file ${state} is in use by another daemon (pid ${first.child.pid})\n`);
    assert.ok(!existsSync(join(other, 'daemon.pid')), 'the refused daemon wrote nothing in its directory');

    await runsOnToSuccess(api, exec);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
  } finally {
    await db.drop();
  }
});

test('the lock: refused while held in this process too, free after release; a separate SQLite state file is locked as well', () => {
  const dir = tempDir('svc-lock-');
  const state = join(tempDir('svc-state-'), 'shared.db');
  const a = lockDataDir(dir, state);
  assert.throws(() => lockDataDir(dir), { message: `data directory ${dir} is in use by another daemon (pid ${process.pid})` });
  const other = tempDir('svc-lock-');
  assert.throws(() => lockDataDir(other, state), { message: `state file ${state} is in use by another daemon (pid ${process.pid})` });
  assert.ok(!existsSync(join(other, 'daemon.pid')), 'a refused daemon writes nothing');
  a.release();
  const b = lockDataDir(dir, state);
  b.release();
});

test('PostgreSQL state store shared by two daemons: starting the second does not interrupt the first one\'s execution', async (t) => {
  if (!(await requirePg(t))) return;
  const warehouse = await createTempDatabase('svc_lock_wh');
  const state = await createTempDatabase('svc_lock_state');
  const { main } = await import('../cli/main.js');
  const run = async (...argv: string[]) => {
    let out = '';
    const code = await main(argv, { out: (s) => (out += s), err: () => {} });
    assert.equal(code, 0, argv.join(' '));
    return out.trim();
  };
  try {
    const dirA = tempDir('svc-lock-a-');
    const dirB = tempDir('svc-lock-b-');
    const projectId = await run('project', 'create', 'acme', '--data-dir', dirA, '--state', state.url);
    const token = await run('token', 'create', '--project', 'acme', '--data-dir', dirA, '--state', state.url);
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(join(dirA, 'projects', projectId), { recursive: true });
    writeFileSync(join(dirA, 'projects', projectId, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${warehouse.url}\n`);
    const started: DaemonChild[] = [];
    try {
      const a = await startDaemonChild(dirA, ['--state', state.url]);
      started.push(a);
      const api = projectClient(a.url, token);
      // Long enough that the second daemon is up (and has run its start-up recovery) while it still runs,
      // even when start-up takes seconds on a loaded machine.
      const saved = await api.post('/project/file/save', { file: { name: 'slow.sql', body: '-- connection: WAREHOUSE\nselect 1 as x from pg_sleep(8);\n' } });
      const exec = (await api.post('/project/job/run', { job_id: saved.default_job_id })).exec_id as string;
      await until(async () => ((await activeQueries(warehouse.name, 'pg_sleep(8)')) > 0 ? true : undefined), 'the slow query to start');
      const b = await startDaemonChild(dirB, ['--state', state.url]);
      started.push(b);
      await runsOnToSuccess(api, exec);
      for (const d of [a, b]) d.child.kill('SIGTERM');
      assert.deepEqual(await Promise.all([a.exited, b.exited]), [0, 0]);
    } finally {
      // A failed assertion must not leave daemons running (the file would wait for them until its timeout).
      for (const d of started) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
      await Promise.all(started.map((d) => d.exited));
    }
  } finally {
    await warehouse.drop();
    await state.drop();
  }
});
