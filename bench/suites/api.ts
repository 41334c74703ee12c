/**
 * Suite 4 — API. A real daemon (`service serve`, SQLite state store) with
 * 100,000 executions of 10 jobs stored (10,000 in --quick; mixed statuses,
 * see bench/lib/list-queries.ts), then 50 concurrent keep-alive clients on
 * loopback, each sending its next request when the previous one answered,
 * for a bounded 10 s (2 s in --quick) after a short untimed warm-up on the
 * same connections:
 *   - `GET /execution/list?limit=100`, the same URL every time (the page
 *     cache's path: nothing writes during the load);
 *   - `GET /execution/list` with every request a different filter (limit,
 *     order, status, job, and a period cursor unique to the request): no
 *     request can be answered from the page cache;
 *   - `POST /project/file/save` (500 distinct files, small bodies);
 * requests/s and p50/p99 latency as the clients see them, non-200 answers and
 * socket errors counted as errors; the server's CPU time per request from
 * /proc. Then `/health` idle and while a 1,000,000-row replication runs in
 * the same daemon (api-health.ts).
 *
 * Baseline ("physical limit"): floor/api-floor.mjs, a bare node:http server
 * in its own process doing the same physical work without our stack — the
 * same page and status-count queries (the same filters) on the same state
 * file with better-sqlite3, JSON.stringify'd; the same file written with the
 * same durability (temp file, fsync, rename, directory fsync). Same load
 * generator, clients and duration; the floor runs first, then the daemon.
 * Ratio = floor requests/s ÷ ours (cost per request under the same load).
 * The floor builds each page's JSON from raw rows, as a plain server would;
 * the daemon reads the JSON SQLite stored in each finished execution's row
 * (state schema version 3), so the varied-filter ratio measures that design
 * as well as the stack's overhead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, startServer, type Body, type LoadResult, type Server } from '../lib/http-load.js';
import { seedExecutions, variedListPath } from '../lib/list-queries.js';
import { int, ms, type Row } from '../lib/report.js';
import { CLI, runCli } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';
import { createReplicationSource, healthDuringReplication } from './api-health.js';

const FLOOR = fileURLToPath(new URL('../floor/api-floor.mjs', import.meta.url));
/** This round's targets: list p99 with every request a different filter, and save p99. */
export const LIST_P99_TARGET_MS = 10;
export const SAVE_P99_TARGET_MS = 15;
const CLIENTS = 50;
const FILES = 500;
const JOBS = 10;

interface Measured {
  readonly list: LoadResult;
  readonly varied: LoadResult;
  readonly save: LoadResult;
  /** Responses received, warm-ups included: the daemon must have logged one line for each. */
  readonly answered: number;
}

/** Warm-up (untimed), then the three timed loads, against one running server. */
async function measure(ctx: SuiteContext, who: string, server: Server, token: string | undefined, jobIds: readonly string[], executions: number, seconds: number, warmup: number): Promise<Measured> {
  const auth: Record<string, string> = token ? { Authorization: `Service-Project-Token ${token}` } : {};
  const saveBody: Body = (i) => JSON.stringify({ file: { name: `load/f${i % FILES}.txt`, body: `body ${i}\n` } });
  const common = { seconds, warmup, clients: CLIENTS, ...(server.child.pid ? { pid: server.child.pid } : {}) };
  ctx.progress(`api: ${who}: GET /execution/list?limit=100, ${CLIENTS} clients, ${seconds} s`);
  const list = await load(server.url, new URL('/execution/list?limit=100', server.url), { ...common, method: 'GET', headers: auth });
  ctx.progress(`api: ${who}: GET /execution/list, a different filter every request, ${CLIENTS} clients, ${seconds} s`);
  const varied = await load(server.url, (i) => variedListPath(i, jobIds, executions), { ...common, method: 'GET', headers: auth });
  ctx.progress(`api: ${who}: POST /project/file/save, ${CLIENTS} clients, ${seconds} s`);
  const save = await load(server.url, new URL('/project/file/save', server.url), { ...common, method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: saveBody });
  const answered = [list, varied, save].reduce((n, r) => n + r.warmupRequests + r.requests, 0);
  return { list, varied, save, answered };
}

const describe = (r: LoadResult): string =>
  `${int(r.perSecond)} req/s · p50 ${ms(r.p50)} · p99 ${ms(r.p99)} · ${int(r.errors)} errors · server CPU ${ms(r.serverCpuMsPerRequest)}/req`;

function row(ctx: SuiteContext, id: string, label: string, targetMs: number, ours: LoadResult, floor: LoadResult, extra: Readonly<Record<string, unknown>>): Row {
  const met = ours.p99 <= targetMs && ours.errors === 0;
  const over = ours.p99 - targetMs;
  return {
    id,
    label,
    ours: describe(ours),
    baseline: `bare node:http ${describe(floor)}`,
    ratio: ours.perSecond > 0 ? floor.perSecond / ours.perSecond : null,
    target: {
      text: `p99 ≤ ${targetMs} ms at ${CLIENTS} clients`,
      met: ctx.quick ? null : met,
      ...(!ctx.quick && !met ? { miss: ours.errors > 0 ? `${int(ours.errors)} errors` : `+${ms(over)} (${((over / targetMs) * 100).toFixed(0)}%)` } : {}),
    },
    data: { clients: CLIENTS, ...extra, ours, floor, p99RatioToFloor: floor.p99 > 0 ? ours.p99 / floor.p99 : null },
  };
}

export async function apiThroughput(ctx: SuiteContext): Promise<Row[]> {
  const executions = ctx.quick ? 10_000 : 100_000;
  const seconds = ctx.quick ? 2 : 10;
  const warmup = ctx.quick ? 0.3 : 1;
  const dataDir = join(ctx.work, 'api-daemon');
  const stateFile = join(dataDir, 'state.db');
  ctx.progress(`api: project, token and ${int(executions)} executions of ${JOBS} jobs`);
  const projectId = (await runCli(['project', 'create', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  const token = (await runCli(['token', 'create', '--project', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  const jobIds = await seedExecutions(stateFile, projectId, executions, { jobs: JOBS, mixedStatuses: true });
  const source = await createReplicationSource(ctx, dataDir, projectId);

  const floorServer = await startServer(FLOOR, [stateFile, projectId, join(ctx.work, 'api-floor-files')], ctx.cliEnv, join(ctx.work, 'api-floor.log'));
  let floor: Measured;
  try {
    floor = await measure(ctx, 'floor', floorServer, undefined, jobIds, executions, seconds, warmup);
  } finally {
    await floorServer.stop();
  }
  const serve = ['serve', '--data-dir', dataDir, '--port', '0'];
  const daemonLog = join(ctx.work, 'api-daemon.log');
  const daemon = await startServer(CLI, serve, ctx.cliEnv, daemonLog);
  let ours: Measured;
  let health: Row;
  let logged: number;
  try {
    ours = await measure(ctx, 'daemon', daemon, token, jobIds, executions, seconds, warmup);
    await new Promise((r) => setTimeout(r, 200)); // the batched request log reaches the file
    // One log line per request. A request log that lost lines under load would make the figures a lie.
    logged = readFileSync(daemonLog, 'utf8').split('\n').filter((l) => /"msg":"(GET|POST) \//.test(l)).length;
    if (logged !== ours.answered) ctx.progress(`api: warning: the daemon logged ${int(logged)} request lines for ${int(ours.answered)} answered requests`);
    health = await healthDuringReplication(ctx, daemon, token, source);
  } finally {
    await daemon.stop();
  }
  if (ctx.profileDir) {
    ctx.progress('api: profiling the daemon under the same load (extra run, not timed)');
    const profiled = await startServer(CLI, serve, ctx.cliEnv, join(ctx.work, 'api-daemon-profiled.log'), ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'api-daemon')]);
    try {
      await measure(ctx, 'daemon --cpu-prof', profiled, token, jobIds, executions, seconds, warmup);
    } finally {
      await profiled.stop();
    }
    // /health during the replication gets a daemon and a profile of its own: its worker threads (the pool, the DuckDB file's thread) each write one.
    ctx.progress('api: profiling /health during the replication (extra run, not timed)');
    const replicating = await startServer(CLI, serve, ctx.cliEnv, join(ctx.work, 'api-health-profiled.log'), ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'api-health-daemon')]);
    try {
      await healthDuringReplication(ctx, replicating, token, source, 'replications/bench-profiled.yaml');
    } finally {
      await replicating.stop();
    }
  }
  const extra = { seconds, executions, jobs: JOBS, daemonRequestLogLines: logged, daemonAnswered: ours.answered };
  return [
    row(ctx, 'api.execution-list', `4. GET /execution/list?limit=100 (same URL: page cache), ${int(executions)} executions, ${CLIENTS} clients`, LIST_P99_TARGET_MS, ours.list, floor.list, extra),
    row(ctx, 'api.execution-list-varied', `4. GET /execution/list, a different filter every request, ${int(executions)} executions, ${CLIENTS} clients`, LIST_P99_TARGET_MS, ours.varied, floor.varied, extra),
    row(ctx, 'api.file-save', `4. POST /project/file/save (${FILES} files), ${CLIENTS} clients`, SAVE_P99_TARGET_MS, ours.save, floor.save, extra),
    health,
  ];
}
