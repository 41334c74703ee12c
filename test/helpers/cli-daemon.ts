/**
 * The CLI against a real in-process daemon: a fresh temp data
 * dir and home dir, project `acme` and its token made by the operator
 * commands through `main()`, a project env file with the fixture connections
 * whose WAREHOUSE is a fresh PostgreSQL database holding
 * public.users (3 rows), and `startDaemon` on an ephemeral port.
 * SERVICE_HOME_DIR points at the empty temp home until `close()`, so the
 * machine's ~/.service/env.yaml never leaks in. `close()` stops the daemon,
 * drops the database and removes the temp dir.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseServeFlags } from '../../cli/daemon-flags.js';
import { main } from '../../cli/main.js';
import { startDaemon, type RunningDaemon } from '../../daemon/start-daemon.js';
import type { Logger } from '../../engine/log.js';
import { projectPaths } from '../../engine/daemon-projects/project-paths.js';
import { fixtureEnv } from './api-server.js';
import { createTempDatabase, type TempDatabase } from './pg.js';

export type Env = Record<string, string | undefined>;

export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Sets the variables (undefined deletes), runs fn, restores them. */
export async function withEnv<T>(vars: Env, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Env) => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

/** `main(argv)` with captured output; the environment is whatever the caller set. */
export async function runMain(argv: readonly string[]): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

export interface CliDaemon {
  readonly base: string;
  readonly dataDir: string;
  readonly db: TempDatabase;
  readonly daemon: RunningDaemon;
  readonly projectId: string;
  readonly token: string;
  /** The environment of a client command: acme's token and the daemon's URL. */
  readonly env: Env;
  /** A command with `env` (plus overrides). */
  cli(argv: readonly string[], env?: Env): Promise<Run>;
  /** A command that must exit 0 with nothing on stderr; its stdout. */
  ok(argv: readonly string[]): Promise<string>;
  /** `ok([...argv, '-o', 'json'])` parsed. */
  json(argv: readonly string[]): Promise<any>;
  close(): Promise<void>;
}

export async function startCliDaemon(): Promise<CliDaemon> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'service-cli-'));
  const savedHome = process.env.SERVICE_HOME_DIR;
  process.env.SERVICE_HOME_DIR = path.join(base, 'home');
  const dataDir = path.join(base, 'data');
  const db = await createTempDatabase('cli_clients');
  let daemon: RunningDaemon | undefined;
  try {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("create table public.users (id int primary key, name text); insert into public.users values (1, 'ada'), (2, 'bob'), (3, 'cy')");
    await c.end();
    const created = await runMain(['project', 'create', 'acme', '--data-dir', dataDir]);
    assert.equal(created.code, 0, created.err);
    const projectId = created.out.trim();
    assert.match(projectId, /^proj_[a-z0-9]{16}$/);
    const issued = await runMain(['token', 'create', '--project', 'acme', '--label', 'cli tests', '--data-dir', dataDir]);
    assert.equal(issued.code, 0, issued.err);
    const token = issued.out.trim();
    await writeFile(projectPaths(dataDir, projectId).envFile, fixtureEnv(db.url));
    const logger: Logger = { log: () => {}, enabled: () => false };
    const d = await startDaemon(parseServeFlags(['--data-dir', dataDir, '--port', '0']), logger);
    daemon = d;
    const env: Env = { SERVICE_PROJECT_TOKEN: token, SERVICE_PLATFORM_HOST: d.url };
    const cli = (argv: readonly string[], more: Env = {}) => withEnv({ ...env, ...more }, () => runMain(argv));
    const ok = async (argv: readonly string[]) => {
      const r = await cli(argv);
      assert.equal(r.code, 0, `service ${argv.join(' ')} exited ${r.code}: ${r.err}`);
      assert.equal(r.err, '');
      return r.out;
    };
    return {
      base,
      dataDir,
      db,
      daemon: d,
      projectId,
      token,
      env,
      cli,
      ok,
      json: async (argv) => JSON.parse(await ok([...argv, '-o', 'json'])),
      async close() {
        await d.stop(true);
        await db.drop();
        if (savedHome === undefined) delete process.env.SERVICE_HOME_DIR;
        else process.env.SERVICE_HOME_DIR = savedHome;
        await rm(base, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await daemon?.stop(true);
    await db.drop();
    if (savedHome === undefined) delete process.env.SERVICE_HOME_DIR;
    else process.env.SERVICE_HOME_DIR = savedHome;
    await rm(base, { recursive: true, force: true });
    throw err;
  }
}
