/**
 * Suite 4 — API. A real daemon (`service serve`, SQLite state store) with
 * 100,000 executions stored (10,000 in --quick), then 50 concurrent
 * keep-alive clients on loopback, each sending its next request when the
 * previous one answered, for a bounded 10 s (2 s in --quick) after a short
 * untimed warm-up on the same connections: `GET /execution/list?limit=100`, then `POST
 * /project/file/save` (500 distinct files, small bodies). Requests/s and
 * p50/p99 latency as the clients see them, non-200 answers and socket errors
 * counted as errors; the server's CPU time per request from /proc.
 *
 * Baseline ("physical limit"): floor/api-floor.mjs, a bare node:http server
 * in its own process doing the same physical work without our stack — the
 * same page and status-count queries on the same state file with
 * better-sqlite3, JSON.stringify'd; the same file written with the same
 * durability (temp file, fsync, rename, directory fsync). Same load
 * generator, clients and duration; the floor runs first, then the daemon.
 * Ratio = floor requests/s ÷ ours (cost per request under the same load).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStateStore } from '../../engine/state/open-state-store.js';
import type { NewExecution } from '../../engine/state/store.js';
import { int, ms, type Row } from '../lib/report.js';
import { CLI, REPO, runCli } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';

const FLOOR = fileURLToPath(new URL('../floor/api-floor.mjs', import.meta.url));
export const API_P99_TARGET_MS = 50;
const CLIENTS = 50;
const FILES = 500;
/** Hard stop whatever the speed: the load is bounded by time and by count. */
const MAX_REQUESTS = 2_000_000;

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Server process CPU time (user + system) per answered request, ms; 0 when /proc is not readable. */
  readonly serverCpuMsPerRequest: number;
}

type Body = (i: number) => string | undefined;

/** user + system CPU of a live process in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * `clients` keep-alive clients in a closed loop against one URL: first for
 * `warmup` seconds untimed, then for `seconds` timed, on the same
 * connections. (Timing from fresh connections measured their set-up: 50
 * connections opened at once to a busy server got their first answers one
 * after another, the last after about a second, on our daemon and the floor
 * alike.) `warmupRequests` counts the untimed answers.
 */
export async function load(url: URL, method: 'GET' | 'POST', headers: Record<string, string>, body: Body, seconds: number, warmup: number, clients = CLIENTS, pid?: number): Promise<LoadResult & { readonly warmupRequests: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  let latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const b = body(i);
      const req = http.request(url, { method, agent, headers: { ...headers, ...(b !== undefined ? { 'Content-Length': Buffer.byteLength(b) } : {}) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(b);
    });
  const loop = async (until: number) =>
    Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until && sent < MAX_REQUESTS) await one(sent++);
      }),
    );
  await loop(performance.now() + warmup * 1000);
  const warmupRequests = latencies.length;
  latencies = [];
  errors = 0;
  const cpu0 = pid === undefined ? 0 : cpuMsOf(pid);
  const started = performance.now();
  await loop(started + seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = pid === undefined ? 0 : cpuMsOf(pid) - cpu0;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    errors,
    seconds: elapsed,
    perSecond: latencies.length / elapsed,
    p50: pct(50),
    p99: pct(99),
    max: latencies[latencies.length - 1] ?? 0,
    serverCpuMsPerRequest: latencies.length > 0 ? cpu / latencies.length : 0,
    warmupRequests,
  };
}

/** Stores `count` finished executions of one query job, 10,000 per transaction. */
export async function seedExecutions(stateFile: string, projectId: string, count: number): Promise<void> {
  const store = await openStateStore(stateFile);
  try {
    const job = await store.createJob({
      project_id: projectId, name: 'bench', type: 'query', file_name: 'q.sql', description: '', active: false, default: false,
      streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    });
    const start = Date.parse('2025-01-01T00:00:00Z');
    for (let b = 0; b < count; b += 10_000) {
      const batch: NewExecution[] = [];
      for (let i = b; i < Math.min(count, b + 10_000); i++) {
        const t = new Date(start + i * 1000).toISOString();
        const end = new Date(start + i * 1000 + 250 + (i % 7) * 100).toISOString();
        batch.push({ project_id: projectId, job_id: job.id, job_name: 'bench', job_type: 'query', file_name: 'q.sql', trigger: 'api', status: 'success', start_time: t, end_time: end, rows: i % 100, bytes: (i % 100) * 64 });
      }
      await store.insertExecutionsBulk(batch);
    }
  } finally {
    await store.close();
  }
}

export interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  /** SIGTERM, then waits for the exit (a --cpu-prof profile is written on exit). */
  stop(): Promise<void>;
}

/**
 * Spawns a node program that logs `listening on http://…` on stderr. Its
 * stderr (the daemon's request log: one line per request) goes to a file, so
 * the load generator in this process spends nothing reading it.
 */
export async function startServer(script: string, args: readonly string[], env: Readonly<Record<string, string>>, logFile: string, nodeFlags: readonly string[] = []): Promise<Server> {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', fd] });
  closeSync(fd);
  let code: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (c) => {
      code = c;
      resolve();
    }),
  );
  const head = () => readFileSync(logFile, 'utf8').slice(0, 100_000);
  const startedAt = performance.now();
  let url: string | undefined;
  while (url === undefined) {
    await new Promise((r) => setTimeout(r, 25));
    url = /listening on (http:\/\/[^\s"]+)/.exec(head())?.[1];
    if (url === undefined && code !== undefined) throw new Error(`${script} exited with ${code} before listening:\n${head()}`);
    if (url === undefined && performance.now() - startedAt > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`${script} did not start listening within 30 s:\n${head()}`);
    }
  }
  return {
    child,
    url,
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

interface Pair {
  readonly list: LoadResult;
  readonly save: LoadResult;
  /** Responses received, warm-ups included: the daemon must have logged one line for each. */
  readonly answered: number;
}

/** Warm-up (untimed), then the two timed loads, against one running server. */
async function measure(ctx: SuiteContext, who: string, server: Server, token: string | undefined, seconds: number, warmup: number): Promise<Pair> {
  const auth: Record<string, string> = token ? { Authorization: `Service-Project-Token ${token}` } : {};
  const listUrl = new URL('/execution/list?limit=100', server.url);
  const saveUrl = new URL('/project/file/save', server.url);
  const saveBody: Body = (i) => JSON.stringify({ file: { name: `load/f${i % FILES}.txt`, body: `body ${i}\n` } });
  const pid = server.child.pid;
  ctx.progress(`api: ${who}: GET /execution/list?limit=100, ${CLIENTS} clients, ${seconds} s`);
  const list = await load(listUrl, 'GET', auth, () => undefined, seconds, warmup, CLIENTS, pid);
  ctx.progress(`api: ${who}: POST /project/file/save, ${CLIENTS} clients, ${seconds} s`);
  const json = { ...auth, 'Content-Type': 'application/json' };
  const save = await load(saveUrl, 'POST', json, saveBody, seconds, warmup, CLIENTS, pid);
  return { list, save, answered: list.warmupRequests + list.requests + save.warmupRequests + save.requests };
}

const describe = (r: LoadResult): string =>
  `${int(r.perSecond)} req/s · p50 ${ms(r.p50)} · p99 ${ms(r.p99)} · ${int(r.errors)} errors · server CPU ${ms(r.serverCpuMsPerRequest)}/req`;

function row(ctx: SuiteContext, id: string, label: string, ours: LoadResult, floor: LoadResult, extra: Readonly<Record<string, unknown>>): Row {
  const met = ours.p99 <= API_P99_TARGET_MS && ours.errors === 0;
  const over = ours.p99 - API_P99_TARGET_MS;
  return {
    id,
    label,
    ours: describe(ours),
    baseline: `bare node:http ${describe(floor)}`,
    ratio: ours.perSecond > 0 ? floor.perSecond / ours.perSecond : null,
    target: {
      text: `p99 ≤ ${API_P99_TARGET_MS} ms at ${CLIENTS} clients`,
      met: ctx.quick ? null : met,
      ...(!ctx.quick && !met ? { miss: ours.errors > 0 ? `${int(ours.errors)} errors` : `+${ms(over)} (${((over / API_P99_TARGET_MS) * 100).toFixed(0)}%)` } : {}),
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
  ctx.progress(`api: project, token and ${int(executions)} executions`);
  const projectId = (await runCli(['project', 'create', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  const token = (await runCli(['token', 'create', '--project', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  await seedExecutions(stateFile, projectId, executions);

  const floorServer = await startServer(FLOOR, [stateFile, projectId, join(ctx.work, 'api-floor-files')], ctx.cliEnv, join(ctx.work, 'api-floor.log'));
  let floor: Pair;
  try {
    floor = await measure(ctx, 'floor', floorServer, undefined, seconds, warmup);
  } finally {
    await floorServer.stop();
  }
  const serve = ['serve', '--data-dir', dataDir, '--port', '0'];
  const daemonLog = join(ctx.work, 'api-daemon.log');
  const daemon = await startServer(CLI, serve, ctx.cliEnv, daemonLog);
  let ours: Pair;
  try {
    ours = await measure(ctx, 'daemon', daemon, token, seconds, warmup);
  } finally {
    await daemon.stop();
  }
  // One log line per request. A request log that lost lines under load would make the figures a lie.
  const logged = readFileSync(daemonLog, 'utf8').split('\n').filter((l) => /"msg":"(GET|POST) \//.test(l)).length;
  if (logged !== ours.answered) ctx.progress(`api: warning: the daemon logged ${int(logged)} request lines for ${int(ours.answered)} answered requests`);
  if (ctx.profileDir) {
    ctx.progress('api: profiling the daemon under the same load (extra run, not timed)');
    const profiled = await startServer(CLI, serve, ctx.cliEnv, join(ctx.work, 'api-daemon-profiled.log'), ['--cpu-prof', '--cpu-prof-dir', join(ctx.profileDir, 'api-daemon')]);
    try {
      await measure(ctx, 'daemon --cpu-prof', profiled, token, seconds, warmup);
    } finally {
      await profiled.stop();
    }
  }
  const extra = { seconds, executions, daemonRequestLogLines: logged, daemonAnswered: ours.answered };
  return [
    row(ctx, 'api.execution-list', `4. GET /execution/list?limit=100, ${int(executions)} executions, ${CLIENTS} clients`, ours.list, floor.list, extra),
    row(ctx, 'api.file-save', `4. POST /project/file/save (${FILES} files), ${CLIENTS} clients`, ours.save, floor.save, extra),
  ];
}
