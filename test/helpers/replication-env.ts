/**
 * A replication test environment: a fresh PostgreSQL database (WAREHOUSE;
 * PGTWO = the same database under a second name for PG→PG; SECRETPG = the
 * same with a password in its URL), two DuckDB files (LAKE, LAKE2), a file
 * connection root (FILES), the worker pool and the log
 * line router — what the daemon gives a replication execution.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { lineRouter, type LineRouter } from '../../actors/daemon/line-router.js';
import { runReplicationFile, type ReplicationFileRun, type ReplicationRun } from '../../actors/daemon/replication-work.js';
import { closeAllDuckDbActors } from '../../actors/duckdb-actor.js';
import { TaskPool } from '../../actors/pool.js';
import { loadConnections, type ConnectionRegistry } from '../../engine/connections/index.js';
import type { ReplicationFile } from '../../engine/jobs/index.js';
import { closeAllDuckdbInstances } from '../../engine/targets/index.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './pg.js';

export interface ReplicationEnv {
  readonly db: TempDatabase;
  readonly dir: string;
  readonly lake: string;
  readonly files: string;
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly connections: ConnectionRegistry;
  /** Runs a replication file like an execution would (task log lines collected per stream). */
  run(file: ReplicationFile, options?: Partial<Pick<ReplicationRun, 'streams' | 'mode' | 'vars'>> & { threads?: number; signal?: AbortSignal; start?: Date }): Promise<ReplicationFileRun & { log: string[] }>;
  close(): Promise<void>;
}

let seq = 0;

/** A password PostgreSQL's trust authentication ignores: it must never show up in a message. */
export const SECRET = 's3cr3tpassw0rd';

function secretUrl(url: string): string {
  const u = new URL(url);
  u.password = SECRET;
  return u.toString();
}

export async function replicationEnv(prefix: string): Promise<ReplicationEnv> {
  const db = await createTempDatabase(prefix);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'service-repl-test-'));
  const lake = path.join(dir, 'lake.duckdb');
  const files = path.join(dir, 'files');
  await mkdir(files, { recursive: true });
  const envFile = path.join(dir, 'env.yaml');
  await writeFile(envFile, [
    'connections:',
    `  WAREHOUSE:`,
    `    url: ${db.url}`,
    `  PGTWO:`,
    `    url: ${db.url}`,
    `  SECRETPG:`,
    `    url: ${secretUrl(db.url)}`,
    `  LAKE:`,
    `    type: duckdb`,
    `    instance: ${lake}`,
    `  LAKE2:`,
    `    type: duckdb`,
    `    instance: ${path.join(dir, 'lake2.duckdb')}`,
    `  FILES:`,
    `    type: file`,
    `    url: file://${files}`,
    '',
  ].join('\n'));
  const connections = loadConnections({ projectEnvFile: envFile, env: { SERVICE_HOME_DIR: path.join(dir, 'home') }, cwd: dir });
  const pool = new TaskPool({ maxThreads: 2, minThreads: 0, idleTimeout: 60_000 });
  const lines = lineRouter();
  return {
    db,
    dir,
    lake,
    files,
    pool,
    lines,
    connections,
    async run(file, o = {}) {
      const log: string[] = [];
      const ac = new AbortController();
      const r = await runReplicationFile(
        file,
        {
          pool,
          lines,
          connections,
          projectRoot: dir,
          execId: `2testexec${String(++seq).padStart(18, '0')}`,
          start: o.start ?? new Date(),
          streams: o.streams ?? [],
          mode: o.mode ?? null,
          vars: o.vars ?? (() => undefined),
          env: () => undefined,
        },
        o.signal ?? ac.signal,
        (line) => log.push(line),
        o.threads ?? 1,
      );
      return { ...r, log };
    },
    async close() {
      await pool.destroy();
      lines.close();
      await closeAllDuckDbActors();
      await closeAllDuckdbInstances();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One environment for a test file: registers the file's `before` (create it
 * and run `setup` on it, when PostgreSQL is reachable) and `after` (close
 * it), and returns what each test calls first: the environment, or
 * undefined when the test was skipped for want of PostgreSQL.
 */
export function replicationSuite(prefix: string, setup?: (env: ReplicationEnv) => Promise<void>): (t: TestContext) => Promise<ReplicationEnv | undefined> {
  let env: ReplicationEnv | undefined;
  before(async () => {
    if (!(await pgAvailable())) return;
    env = await replicationEnv(prefix);
    await setup?.(env);
  });
  after(async () => {
    await env?.close();
  });
  return async (t) => ((await requirePg(t)) ? env! : undefined);
}
