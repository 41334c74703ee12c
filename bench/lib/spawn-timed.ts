/**
 * Spawns a Node program (the real CLI, or a floor script) and measures it
 * from the outside: wall time from spawn to exit, peak RSS and CPU time, and
 * — for build runs, which log JSON lines (SERVICE_LOGGING=JSON) — the phases
 * between spawn, the first `START` line, the summary line and exit.
 *
 * Peak RSS and CPU come from GNU `/usr/bin/time -f` when present, else from
 * polling /proc/<pid>/status (VmHWM, every 20 ms). Nothing is loaded into the
 * measured process: a `--import` preload is inherited by every worker thread
 * and changed what it measured (slower worker start-up, and Node 20 failing
 * module loads under worker churn).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The CLI under test; BENCH_CLI points elsewhere for A/B runs of a candidate fix (a patched build). */
export const CLI = process.env.BENCH_CLI ?? join(REPO, 'bin', 'service.js');
const GNU_TIME = '/usr/bin/time';
const hasGnuTime = existsSync(GNU_TIME);

export interface TimedRun {
  readonly code: number | null;
  readonly wallMs: number;
  /** Peak RSS in bytes (0 when unknown). */
  readonly maxRss: number;
  /** CPU time (user + system, all threads) in ms; 0 when unknown. */
  readonly cpuMs: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Epoch ms at spawn, for lining up log timestamps. */
  readonly spawnedAt: number;
  /** Killed at `timeoutMs`. */
  readonly timedOut: boolean;
  /** By mark name (`SpawnOptions.cpuMarks`): the process's CPU time (ms, all threads) when the first stderr line of that mark arrived, and when (ms after spawn). */
  readonly marks: Readonly<Record<string, { readonly cpuMs: number; readonly atMs: number }>>;
}

export interface SpawnOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Extra node flags (e.g. `--cpu-prof`). */
  readonly nodeFlags?: readonly string[];
  /** Kill the process after this long (the bench must stay bounded). */
  readonly timeoutMs?: number;
  /**
   * Names the stderr lines at which to read the process's CPU time from
   * /proc as they arrive (undefined: not a mark): the CPU of a phase of a
   * run, measured from outside. The logger flushes at the next turn of its
   * event loop, so a mark trails its event by well under a millisecond of
   * the process's own work; /proc counts in 10 ms ticks.
   */
  readonly cpuMarks?: (line: string) => string | undefined;
}

/** user + system CPU (all threads) of a live process in ms, from /proc/<pid>/stat (10 ms clock ticks); NaN when not readable. */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** The measured node process: `/usr/bin/time`'s only child when time wraps it. */
function nodePid(spawned: number): number {
  if (!hasGnuTime) return spawned;
  try {
    const child = Number(readFileSync(`/proc/${spawned}/task/${spawned}/children`, 'utf8').trim().split(' ')[0]);
    return Number.isFinite(child) && child > 0 ? child : spawned;
  } catch {
    return spawned;
  }
}

/** Peak RSS (VmHWM) of a live process from /proc, in bytes; 0 when not readable. */
function vmHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function spawnTimed(script: string, args: readonly string[], opts: SpawnOptions = {}): Promise<TimedRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-time-'));
  const usageFile = join(scratch, 'usage');
  try {
    const nodeArgs = [...(opts.nodeFlags ?? []), script, ...args];
    const [cmd, argv] = hasGnuTime ? [GNU_TIME, ['-f', '%M %U %S', '-o', usageFile, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
    const spawnedAt = Date.now();
    const t0 = performance.now();
    // Own process group, so a timeout kills node and not only /usr/bin/time.
    const child = spawn(cmd, argv, { cwd: opts.cwd ?? REPO, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    const marks: Record<string, { cpuMs: number; atMs: number }> = {};
    let partial = '';
    child.stderr.on('data', (b: Buffer) => {
      err.push(b);
      if (!opts.cpuMarks) return;
      const lines = (partial + b.toString('utf8')).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const mark = opts.cpuMarks(line);
        if (mark !== undefined && !(mark in marks)) marks[mark] = { cpuMs: procCpuMs(nodePid(child.pid!)), atMs: performance.now() - t0 };
      }
    });
    let timedOut = false;
    let polledRss = 0;
    const poll = hasGnuTime ? undefined : setInterval(() => (polledRss = Math.max(polledRss, vmHwm(child.pid!))), 20);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, opts.timeoutMs ?? 300_000);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c) => resolve(c));
    }).finally(() => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
    });
    const wallMs = performance.now() - t0;
    let maxRss = polledRss;
    let cpuMs = 0;
    if (hasGnuTime && existsSync(usageFile)) {
      // The last line: GNU time prefixes "Command exited with non-zero status N" on failures.
      const last = readFileSync(usageFile, 'utf8').trim().split('\n').pop() ?? '';
      const [kb, user, sys] = last.split(' ').map(Number);
      if (kb !== undefined && Number.isFinite(kb)) maxRss = kb * 1024;
      if (user !== undefined && sys !== undefined && Number.isFinite(user + sys)) cpuMs = (user + sys) * 1000;
    }
    return { code, wallMs, maxRss, cpuMs, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), spawnedAt, timedOut, marks };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export class TimeoutError extends Error {}

/** Runs `node <script> <args>`; a timeout or a non-zero exit is an error carrying the stderr tail, naming the program `label`. */
export async function runScript(script: string, args: readonly string[], opts: SpawnOptions = {}, label = script): Promise<TimedRun> {
  const r = await spawnTimed(script, args, opts);
  if (r.timedOut) throw new TimeoutError(`${label} ${args.join(' ')} did not finish within ${((opts.timeoutMs ?? 300_000) / 1000).toFixed(0)} s`);
  if (r.code !== 0) {
    const tail = r.stderr.split('\n').slice(-15).join('\n');
    throw new Error(`${label} ${args.join(' ')} exited with ${r.code}:\n${tail}`);
  }
  return r;
}

/** Runs `node bin/service.js <args>` (runScript). */
export function runCli(args: readonly string[], opts: SpawnOptions = {}): Promise<TimedRun> {
  return runScript(CLI, args, opts, 'service');
}

export interface RunPhases {
  /** Spawn → first node START: process start, module load, project load, compile, connect, schemas. */
  readonly startupMs: number;
  /** First START → summary line: the scheduled execution of every node. */
  readonly executeMs: number;
  /** Summary line → exit: pool and connection shutdown. */
  readonly shutdownMs: number;
}

interface JsonLine {
  readonly msg?: string;
  readonly time?: string;
}

/** Phases of a `build run` that logged JSON lines (SERVICE_LOGGING=JSON). */
export function runPhases(r: TimedRun): RunPhases {
  const lines: JsonLine[] = [];
  for (const text of r.stderr.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(text) as JsonLine);
    } catch {
      // not a log line
    }
  }
  const first = lines.find((l) => l.msg?.endsWith(' START'));
  const summary = lines.find((l) => l.msg?.startsWith('Build Completed in'));
  if (!first?.time || !summary?.time) throw new Error('build run output has no START or summary line (was SERVICE_LOGGING=JSON set?)');
  const start = Date.parse(first.time);
  const end = Date.parse(summary.time);
  const exit = r.spawnedAt + r.wallMs;
  return { startupMs: start - r.spawnedAt, executeMs: end - start, shutdownMs: exit - end };
}
