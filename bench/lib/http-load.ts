/**
 * The HTTP load generators of the API and web-console suites, and the
 * servers they measure. `load`: keep-alive clients in a closed loop (each
 * sends its next request when the previous one answered), timed after an
 * untimed warm-up on the same connections. `openLoad`: requests at a fixed
 * rate from a process of its own (open-loop.mjs). (Timing from fresh connections measured
 * their set-up: 50 connections opened at once to a busy server got their
 * first answers one after another, the last after about a second, on our
 * daemon and the floor alike.)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { procCpuMs, REPO } from './spawn-timed.js';

const run = promisify(execFile);
const OPEN_LOOP = fileURLToPath(new URL('./open-loop.mjs', import.meta.url));

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
  /** Server process CPU time (user + system, all threads) per answered request, ms; 0 when /proc is not readable. */
  readonly serverCpuMsPerRequest: number;
}

/** The body of request i (undefined: none). */
export type Body = (i: number) => string | undefined;
/** The path and query of request i (every request may ask for something else). */
export type Target = URL | ((i: number) => string);

/** user + system CPU of a live process in ms (0 when /proc is not readable). */
function cpuMsOf(pid: number): number {
  const v = procCpuMs(pid);
  return Number.isNaN(v) ? 0 : v;
}

export interface LoadOptions {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Body;
  readonly seconds: number;
  /** Untimed seconds first, on the same connections. */
  readonly warmup: number;
  readonly clients: number;
  /** The server's pid: its CPU time per request is read from /proc. */
  readonly pid?: number;
  /** Stops the timed load early (e.g. when the work it runs beside has ended). */
  readonly until?: () => boolean;
}

/**
 * `clients` keep-alive clients in a closed loop against `base` + `target`:
 * first for `warmup` seconds untimed, then for `seconds` timed, on the same
 * connections. `warmupRequests` counts the untimed answers.
 */
export async function load(base: string, target: Target, o: LoadOptions): Promise<LoadResult & { readonly warmupRequests: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.clients });
  const { hostname, port } = new URL(base);
  const pathOf = typeof target === 'function' ? target : () => `${target.pathname}${target.search}`;
  let latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const b = o.body?.(i);
      const headers = { ...o.headers, ...(b !== undefined ? { 'Content-Length': Buffer.byteLength(b) } : {}) };
      const req = http.request({ hostname, port, path: pathOf(i), method: o.method, agent, headers }, (res) => {
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
  const loop = async (until: number, early?: () => boolean) =>
    Promise.all(
      Array.from({ length: o.clients }, async () => {
        while (performance.now() < until && sent < MAX_REQUESTS && !early?.()) await one(sent++);
      }),
    );
  await loop(performance.now() + o.warmup * 1000);
  const warmupRequests = latencies.length;
  latencies = [];
  errors = 0;
  const cpu0 = o.pid === undefined ? 0 : cpuMsOf(o.pid);
  const started = performance.now();
  await loop(started + o.seconds * 1000, o.until);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = o.pid === undefined ? 0 : cpuMsOf(o.pid) - cpu0;
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

export interface OpenLoopOptions {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  /** Requests per second, scheduled on a clock. */
  readonly rate: number;
  readonly seconds: number;
  readonly warmup: number;
  /** Request i asks for paths[i % length] with bodies[i % length]. */
  readonly paths: readonly string[];
  readonly bodies?: readonly string[];
  /** The server's pid: its CPU per request from /proc. */
  readonly pid?: number;
}

/** `LoadResult` of an open loop, plus how late the generator sent its p99 request (its own lag, counted in the latencies). */
export type OpenLoopResult = LoadResult & { readonly senderLagP99: number };

/** Runs open-loop.mjs (a process of its own) against `base`; see its header. */
export async function openLoad(base: string, o: OpenLoopOptions, scratch: string): Promise<OpenLoopResult> {
  const config = join(scratch, `open-loop-${process.hrtime.bigint()}.json`);
  writeFileSync(config, JSON.stringify({ base, ...o }));
  try {
    const { stdout } = await run(process.execPath, [OPEN_LOOP, config], { maxBuffer: 1 << 20, timeout: (o.seconds + o.warmup) * 1000 + 60_000 });
    return JSON.parse(stdout) as OpenLoopResult;
  } finally {
    rmSync(config, { force: true });
  }
}
