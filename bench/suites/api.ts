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
 * /proc. Target: req/s ≥ 1.5× the floor's for the varied list and the save.
 * Then the same varied list and save open-loop at a fixed 1,000 req/s from a
 * process of its own (open-loop.mjs: latency from each request's scheduled
 * time, so queueing counts), 10 s (2 s in --quick) after a 1 s warm-up:
 * targets p99 ≤ 10 ms and ≤ 20 ms, the floor's p99 at the same rate beside
 * them. Then `/health` idle and while a 1,000,000-row replication runs in
 * the same daemon (api-health.ts): p99 ≤ 2× idle.
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
import { load, openLoad, startServer, type Body, type LoadResult, type OpenLoopResult, type Server } from '../lib/http-load.js';
import { seedExecutions, variedListPath } from '../lib/list-queries.js';
import { int, ms, targetOf, type Row } from '../lib/report.js';
import { CLI, runCli } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';
import { createReplicationSource, healthDuringReplication } from './api-health.js';

const FLOOR = fileURLToPath(new URL('../floor/api-floor.mjs', import.meta.url));
/** Open loop at OPEN_RATE: list p99 with every request a different filter, and save p99. */
export const LIST_P99_TARGET_MS = 10;
export const SAVE_P99_TARGET_MS = 20;
export const OPEN_RATE = 1000;
/** Closed loop at CLIENTS: our req/s over the bare floor's. */
export const THROUGHPUT_TARGET = 1.5;
const CLIENTS = 50;
const FILES = 500;
const JOBS = 10;

interface Measured {
  readonly list: LoadResult;
  readonly varied: LoadResult;
  readonly save: LoadResult;
  /** Responses received, warm-ups included (closed loop): the daemon must have logged one line for each. */
  readonly answered: number;
  readonly openVaried: OpenLoopResult;
  readonly openSave: OpenLoopResult;
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
  const total = Math.round(OPEN_RATE * (seconds + warmup));
  const open = { rate: OPEN_RATE, seconds, warmup, ...(server.child.pid ? { pid: server.child.pid } : {}) };
  ctx.progress(`api: ${who}: GET /execution/list, a different filter every request, open loop at ${OPEN_RATE} req/s, ${seconds} s`);
  // Other filters than the closed loop's (from request 10,000,000 on): none of them is in a cache yet.
  const paths = Array.from({ length: total }, (_, i) => variedListPath(10_000_000 + i, jobIds, executions));
  const openVaried = await openLoad(server.url, { ...open, method: 'GET', headers: auth, paths }, ctx.work);
  ctx.progress(`api: ${who}: POST /project/file/save, open loop at ${OPEN_RATE} req/s, ${seconds} s`);
  const bodies = Array.from({ length: FILES }, (_, i) => saveBody(i)!);
  const openSave = await openLoad(server.url, { ...open, method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, paths: ['/project/file/save'], bodies }, ctx.work);
  // Every open-loop request is answered before openLoad returns, the warm-ups' too.
  return { list, varied, save, answered: answered + 2 * total, openVaried, openSave };
}

const describe = (r: LoadResult): string =>
  `${int(r.perSecond)} req/s · p50 ${ms(r.p50)} · p99 ${ms(r.p99)} · ${int(r.errors)} errors · server CPU ${ms(r.serverCpuMsPerRequest)}/req`;

/** Closed loop: our req/s against the floor's (ratio = cost per request, floor req/s ÷ ours). */
function closedRow(ctx: SuiteContext, id: string, label: string, ours: LoadResult, floor: LoadResult, extra: Readonly<Record<string, unknown>>, judged: boolean): Row {
  const speedup = floor.perSecond > 0 ? ours.perSecond / floor.perSecond : 0;
  return {
    id,
    label,
    ours: describe(ours),
    baseline: `bare node:http ${describe(floor)}`,
    ratio: ours.perSecond > 0 ? floor.perSecond / ours.perSecond : null,
    ...(judged ? { target: targetOf(`req/s ≥ ${THROUGHPUT_TARGET}× floor`, ours.errors > 0 ? 0 : speedup, THROUGHPUT_TARGET, ctx.quick, () => (ours.errors > 0 ? `${int(ours.errors)} errors` : `${speedup.toFixed(2)}× the floor's req/s`), true) } : {}),
    data: { clients: CLIENTS, ...extra, ours, floor, p99RatioToFloor: floor.p99 > 0 ? ours.p99 / floor.p99 : null },
  };
}

const describeOpen = (r: OpenLoopResult): string => `p50 ${ms(r.p50)} · p99 ${ms(r.p99)} · max ${ms(r.max)} · ${int(r.perSecond)} req/s · ${int(r.errors)} errors`;

/** Open loop: our p99 at OPEN_RATE against the target, the floor's p99 at the same rate beside it. */
function openRow(ctx: SuiteContext, id: string, label: string, targetMs: number, ours: OpenLoopResult, floor: OpenLoopResult): Row {
  return {
    id,
    label,
    ours: describeOpen(ours),
    baseline: `bare node:http ${describeOpen(floor)}`,
    ratio: floor.p99 > 0 ? ours.p99 / floor.p99 : null,
    target: targetOf(`p99 ≤ ${targetMs} ms`, ours.errors > 0 ? Number.POSITIVE_INFINITY : ours.p99, targetMs, ctx.quick, (o) => (ours.errors > 0 ? `${int(ours.errors)} errors` : `+${ms(o)} over`)),
    data: { rate: OPEN_RATE, ours, floor },
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
  const varied = `GET /execution/list, a different filter every request, ${int(executions)} executions`;
  const save = `POST /project/file/save (${FILES} files)`;
  return [
    closedRow(ctx, 'api.execution-list', `5. GET /execution/list?limit=100 (same URL: page cache), ${int(executions)} executions, ${CLIENTS} clients`, ours.list, floor.list, extra, false),
    closedRow(ctx, 'api.execution-list-varied', `5. ${varied}, ${CLIENTS} closed-loop clients`, ours.varied, floor.varied, extra, true),
    closedRow(ctx, 'api.file-save', `5. ${save}, ${CLIENTS} closed-loop clients`, ours.save, floor.save, extra, true),
    openRow(ctx, 'api.execution-list-varied.open', `5. ${varied}, open loop at ${int(OPEN_RATE)} req/s`, LIST_P99_TARGET_MS, ours.openVaried, floor.openVaried),
    openRow(ctx, 'api.file-save.open', `5. ${save}, open loop at ${int(OPEN_RATE)} req/s`, SAVE_P99_TARGET_MS, ours.openSave, floor.openSave),
    health,
  ];
}
