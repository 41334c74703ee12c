/**
 * The daemon as a real process (api.md §5.6, §8): `kill -9` during a long
 * query leaves the execution `interrupted` at the next start with every
 * saved file, job and finished execution intact; SIGTERM waits for the
 * grace period, cancels the rest, and exits 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { main } from '../cli/main.js';
import { createTempDatabase, requirePg, PG_ADMIN_URL } from './helpers/pg.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'service.js');

async function cli(...argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { out: (t) => (out += t), err: () => {} });
  assert.equal(code, 0, argv.join(' '));
  return out.trim();
}

interface Daemon {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<number | null>;
}

async function startDaemon(dataDir: string, extra: string[] = []): Promise<Daemon> {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      log += b.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`daemon exited before listening:\n${log}`)));
  });
  return { child, url, exited };
}

function client(url: string, token: string) {
  const headers = { Authorization: `Service-Project-Token ${token}`, 'Content-Type': 'application/json' };
  return {
    post: async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<any>,
    exec: async (id: string) => ((await (await fetch(`${url}/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: id }))}`, { headers })).json()) as any).executions[0],
  };
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function activeSleeps(db: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    const r = await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and state = 'active' and query like '%pg_sleep(60)%'", [db]);
    return r.rows[0].n as number;
  } finally {
    await c.end();
  }
}

async function fixture(dbUrl: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-daemon-'));
  const projectId = await cli('project', 'create', 'acme', '--data-dir', dataDir);
  writeFileSync(join(dataDir, 'projects', projectId, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${dbUrl}\n`);
  const token = await cli('token', 'create', '--project', 'acme', '--data-dir', dataDir);
  return { dataDir, token };
}

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
