/**
 * Suite 4, last row: `/health` p99 while a replication runs in the same
 * daemon, against its p99 on the same daemon just before, idle. The daemon's
 * main thread should only route messages while a replication runs (the
 * PostgreSQL read and the DuckDB load belong to worker threads and the DuckDB
 * file's thread), so a request it serves meanwhile should not wait much
 * longer than when idle.
 *
 * The replication is a job file PostgreSQL → DuckDB of one table of
 * 1,000,000 rows (100,000 in --quick) generated in the bench database — the
 * ten-column shape of the replication suite (replication.ts: integers, numeric,
 * text with quotes and NULLs, boolean, date, timestamps, jsonb, double) —
 * saved and started through the API as a user would (`/project/file/save`,
 * `/project/job/run`); the connections are in the project's env file, as
 * an operator writes them. /health is loaded from the moment the execution
 * is running until it ends (at most the timed seconds), by the same
 * closed-loop clients as the idle measurement.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { projectPaths } from '../../engine/daemon-projects/project-paths.js';
import { load, type LoadResult, type Server } from '../lib/http-load.js';
import { int, ms, type Row } from '../lib/report.js';
import type { SuiteContext } from '../lib/suite-context.js';
import { sourceTableSql } from './replication.js';

export const HEALTH_RATIO_TARGET = 2;
const CLIENTS = 10;
const SCHEMA = 'api_repl';

export interface ReplicationSource {
  readonly rows: number;
  readonly jobFile: string;
}

/** The source table in the bench database and the project's connections (PG, LAKE). */
export async function createReplicationSource(ctx: SuiteContext, dataDir: string, projectId: string): Promise<ReplicationSource> {
  const rows = ctx.quick ? 100_000 : 1_000_000;
  ctx.progress(`api: replication source table of ${int(rows)} rows`);
  const c = new pg.Client({ connectionString: ctx.db.url });
  await c.connect();
  try {
    await c.query(`create schema ${SCHEMA};${sourceTableSql(SCHEMA, rows)}`);
  } finally {
    await c.end();
  }
  const paths = projectPaths(dataDir, projectId);
  writeFileSync(paths.envFile, `connections:\n  PG:\n    url: ${ctx.db.url}\n  LAKE:\n    type: duckdb\n    instance: ${join(dataDir, 'lake.duckdb')}\n`);
  return { rows, jobFile: `source: PG\ntarget: LAKE\nstreams:\n  ${SCHEMA}.src:\n    object: main.bench\n` };
}

interface Execution {
  readonly status: string;
  readonly rows: number;
  readonly duration: number | null;
  readonly error: string | null;
}

/**
 * Idle /health, then /health while the replication job runs; the row compares the two p99s.
 * `file`: the job file's name in the project (a new name for each daemon run: only a created file answers with its default job).
 */
export async function healthDuringReplication(ctx: SuiteContext, daemon: Server, token: string, source: ReplicationSource, file = 'replications/bench.yaml'): Promise<Row> {
  const seconds = ctx.quick ? 2 : 10;
  const auth = { Authorization: `Service-Project-Token ${token}` };
  const api = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(new URL(path, daemon.url), { method, headers: { ...auth, 'Content-Type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const json = (await res.json()) as T;
    if (res.status !== 200) throw new Error(`api bench: ${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const saved = await api<{ default_job_id?: string }>('POST', '/project/file/save', { file: { name: file, body: source.jobFile } });
  if (saved.default_job_id === undefined) throw new Error('api bench: the replication file got no default job');
  const pid = daemon.child.pid;
  const common = { method: 'GET' as const, headers: {}, clients: CLIENTS, ...(pid ? { pid } : {}) };
  ctx.progress(`api: daemon: GET /health idle, ${CLIENTS} clients, ${seconds} s`);
  const idle = await load(daemon.url, new URL('/health', daemon.url), { ...common, seconds, warmup: ctx.quick ? 0.3 : 1 });

  const { exec_id: execId } = await api<{ exec_id: string }>('POST', '/project/job/run', { job_id: saved.default_job_id });
  const get = async (): Promise<Execution> => {
    const { executions } = await api<{ executions: Execution[] }>('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: execId }))}`);
    if (!executions[0]) throw new Error(`api bench: execution ${execId} not found`);
    return executions[0];
  };
  let exec = await get();
  while (exec.status === 'queued') {
    await new Promise((r) => setTimeout(r, 20));
    exec = await get();
  }
  let ended = exec.status !== 'running';
  // Polls until the execution ends: the load stops at that moment, and the row waits for it.
  const watch = (async () => {
    while (!ended) {
      await new Promise((r) => setTimeout(r, 200));
      exec = await get();
      ended = exec.status !== 'running';
    }
  })();
  ctx.progress(`api: daemon: GET /health while replicating ${int(source.rows)} rows PostgreSQL → DuckDB, ${CLIENTS} clients, up to ${seconds} s`);
  const busy = await load(daemon.url, new URL('/health', daemon.url), { ...common, seconds, warmup: 0, until: () => ended });
  await watch;
  if (exec.status !== 'success') throw new Error(`api bench: the replication ended ${exec.status}: ${exec.error}`);
  if (exec.rows !== source.rows) throw new Error(`api bench: the replication copied ${exec.rows} rows, expected ${source.rows}`);
  const describe = (r: LoadResult) => `p50 ${ms(r.p50)} · p99 ${ms(r.p99)} · max ${ms(r.max)} · ${int(r.perSecond)} req/s · ${int(r.errors)} errors`;
  const ratio = idle.p99 > 0 ? busy.p99 / idle.p99 : null;
  const met = ratio !== null && ratio <= HEALTH_RATIO_TARGET && busy.errors === 0;
  return {
    id: 'api.health-during-replication',
    label: `5. GET /health while a ${int(source.rows)}-row replication PostgreSQL → DuckDB runs in the daemon, ${CLIENTS} clients`,
    ours: `${describe(busy)} over ${busy.seconds.toFixed(1)} s of a ${exec.duration === null ? '?' : ms(exec.duration * 1000)} replication`,
    baseline: `same daemon idle: ${describe(idle)}`,
    ratio,
    target: {
      text: `p99 ≤ ${HEALTH_RATIO_TARGET}× idle`,
      met: ctx.quick ? null : met,
      ...(!ctx.quick && !met ? { miss: busy.errors > 0 ? `${int(busy.errors)} errors` : `${(ratio ?? 0).toFixed(2)}× idle` } : {}),
    },
    data: { clients: CLIENTS, rows: source.rows, replicationSeconds: exec.duration, idle, busy },
  };
}
