/**
 * The daemon as a real child process (`bin/service.js serve`), for tests of
 * what only a process shows: kill -9, signals, the data-directory lock.
 * A project `acme` whose WAREHOUSE connection is the given database, and a
 * small fetch client with the project token.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { main } from '../../cli/main.js';
import { PG_ADMIN_URL } from './pg.js';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'service.js');

async function cli(...argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { out: (t) => (out += t), err: () => {} });
  assert.equal(code, 0, argv.join(' '));
  return out.trim();
}

export interface DaemonChild {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<number | null>;
  /** Everything it wrote to stderr so far. */
  log(): string;
}

export async function startDaemonChild(dataDir: string, extra: string[] = [], cwd?: string): Promise<DaemonChild> {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'], ...(cwd ? { cwd } : {}) });
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
  return { child, url, exited, log: () => log };
}

export function projectClient(url: string, token: string) {
  const headers = { Authorization: `Service-Project-Token ${token}`, 'Content-Type': 'application/json' };
  return {
    post: async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<any>,
    exec: async (id: string) => ((await (await fetch(`${url}/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: id }))}`, { headers })).json()) as any).executions[0],
  };
}

/** Polls every 100 ms for up to 15 s. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Active statements in database `db` whose text contains `fragment`. */
export async function activeQueries(db: string, fragment: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  c.on('error', () => {}); // a session terminated by another test fails its query, not the run
  await c.connect();
  try {
    const r = await c.query("select count(*)::int as n from pg_stat_activity where datname = $1 and state = 'active' and query like $2 and pid <> pg_backend_pid()", [db, `%${fragment}%`]);
    return r.rows[0].n as number;
  } finally {
    await c.end();
  }
}

/** A data dir with project `acme` (WAREHOUSE = dbUrl) and a token for it. */
export async function daemonFixture(dbUrl: string): Promise<{ dataDir: string; token: string; projectId: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-daemon-'));
  const projectId = await cli('project', 'create', 'acme', '--data-dir', dataDir);
  writeFileSync(join(dataDir, 'projects', projectId, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${dbUrl}\n`);
  const token = await cli('token', 'create', '--project', 'acme', '--data-dir', dataDir);
  return { dataDir, token, projectId };
}
