/**
 * `service bench dag`: runs a synthetic DAG through the real machinery — the
 * supervisor's ready queue (RunActor) dispatching `bench.task` tasks to the
 * Piscina pool — and compares the wall time with the ideal schedule of the
 * same task durations on the same number of slots (engine/bench/ideal-schedule.ts).
 *
 * Latencies are taken on the clock all threads share
 * (`performance.timeOrigin + now()`):
 * - dispatch latency: from the moment a node could have started (its last
 *   dependency's result is back on the host and a slot is free) to the
 *   moment its handler starts on a worker;
 * - result latency: from the handler's end on the worker to the host
 *   holding the result.
 * A tinybench micro-benchmark adds the bare pool round trip of a noop task.
 */
import { availableParallelism } from 'node:os';
import { Bench } from 'tinybench';
import { dagShape, type ShapeOptions } from '../../engine/bench/dag-shape.js';
import { criticalPath, idealMakespan } from '../../engine/bench/ideal-schedule.js';
import { formatTaskKind, type BenchTaskKind } from '../../engine/bench/task-kind.js';
import type { Connection } from '../../engine/connections/connection.js';
import { EngineError } from '../../engine/errors.js';
import type { RunNodeInput } from '../run-protocol.js';
import { RunActor } from '../run-actor.js';
import type { BenchTask, BenchTaskResult } from './bench-task.js';
import { TaskPool } from '../pool.js';

export interface BenchDagOptions extends ShapeOptions {
  readonly task: BenchTaskKind;
  /** Slots: tasks running at once. */
  readonly threads: number;
  readonly connection?: Connection;
  readonly sql?: string;
  /** Run the tinybench pool round-trip micro-benchmark (default true). */
  readonly micro?: boolean;
}

export interface Percentiles {
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface BenchDagReport {
  readonly shape: string;
  readonly nodes: number;
  readonly edges: number;
  readonly task: string;
  readonly threads: number;
  readonly workerThreads: number;
  readonly tasksPerWorker: number;
  /** Distinct worker threads that ran at least one node. */
  readonly threadsUsed: number;
  readonly wallMs: number;
  readonly idealMs: number;
  readonly criticalPathMs: number;
  /** idealMs / wallMs: 1 is a perfect orchestrator. */
  readonly efficiency: number;
  readonly tasksPerSecond: number;
  readonly dispatchLatencyMs: Percentiles;
  readonly resultLatencyMs: Percentiles;
  /** Bare pool round trip of a noop task, µs (tinybench); null with `micro: false`. */
  readonly poolRoundTripUs: RoundTrip | null;
  readonly failed: number;
  /** Nodes not run because a dependency failed. */
  readonly skipped: number;
  readonly firstError?: string;
}

export interface RoundTrip {
  readonly mean: number;
  readonly p50: number;
  readonly p75: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
}

const clock = () => performance.timeOrigin + performance.now();

export function percentiles(values: readonly number[]): Percentiles {
  if (values.length === 0) return { mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { mean, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1]! };
}

/** Threads × tasks per thread: I/O-bound kinds share a few threads; cpu gets a thread per slot. */
export function poolShape(task: BenchTaskKind, threads: number): { workers: number; perWorker: number } {
  if (task.kind === 'cpu') return { workers: threads, perWorker: 1 };
  const workers = Math.max(1, Math.min(threads, availableParallelism()));
  return { workers, perWorker: Math.ceil(threads / workers) };
}

export async function runBenchDag(opts: BenchDagOptions): Promise<BenchDagReport> {
  const threads = opts.threads;
  if (!Number.isInteger(threads) || threads < 1) throw new EngineError('usage', `--threads must be a positive integer, got ${threads}`);
  if (opts.task.kind === 'sql' && opts.connection?.type !== 'postgres') {
    throw new EngineError('usage', opts.connection ? `--task sql needs a postgres connection; '${opts.connection.name}' is ${opts.connection.type}` : '--task sql needs --connection NAME');
  }
  const deps = dagShape(opts);
  const n = deps.length;
  const { workers, perWorker } = poolShape(opts.task, threads);
  const pool = new TaskPool({ maxThreads: workers, minThreads: workers, concurrentTasksPerWorker: perWorker, idleTimeout: 60_000, preload: ['bench.task'] });
  const task: BenchTask = { type: 'bench.task', work: opts.task, ...(opts.connection ? { connection: opts.connection, sql: opts.sql ?? 'select 1' } : {}) };
  try {
    // Warm-up: every worker started, handler loaded, database sessions opened.
    // With sql the sessions are opened by `select 1`, never by the user's statement (it may write).
    const warm: BenchTask = opts.task.kind === 'sql' ? { ...task, sql: 'select 1' } : { ...task, work: { kind: 'noop' } };
    await Promise.all(Array.from({ length: threads * 2 }, () => pool.run(warm)));

    const result = new Array<BenchTaskResult | undefined>(n);
    const receivedAt = new Float64Array(n);
    const eligibleAt = new Float64Array(n);
    // Times at which a slot became free, oldest first; the supervisor hands a freed slot to the next ready node.
    const freeSlots: number[] = [];
    let freeHead = 0;
    const nodes: RunNodeInput<number>[] = deps.map((d, i) => ({ id: `n${i}`, deps: d.map((p) => `n${p}`), node: i }));
    let runStart = 0;
    const actor = new RunActor<number, BenchTaskResult>(
      { nodes, threads },
      {
        execute: ({ node: i }) => {
          let depsDone = runStart;
          for (const p of deps[i]!) depsDone = Math.max(depsDone, receivedAt[p]!);
          const slot = freeSlots[freeHead++] ?? runStart;
          eligibleAt[i] = Math.max(depsDone, slot);
          return pool.run(task).then((r) => {
            receivedAt[i] = clock();
            result[i] = r;
            freeSlots.push(receivedAt[i]!);
            return r;
          });
        },
      },
    );
    runStart = clock();
    for (let s = 0; s < threads; s++) freeSlots.push(runStart);
    const run = await actor.start();
    const wallMs = Math.max(...receivedAt.filter((_, i) => result[i] !== undefined), runStart) - runStart;

    const failed = run.records.filter((r) => r.status === 'error');
    const skipped = run.records.filter((r) => r.status === 'skipped').length;
    const durations = deps.map((_, i) => (result[i] ? result[i]!.finishedAt - result[i]!.startedAt : 0));
    const dispatch: number[] = [];
    const back: number[] = [];
    const used = new Set<number>();
    for (let i = 0; i < n; i++) {
      const r = result[i];
      if (!r) continue;
      dispatch.push(Math.max(0, r.startedAt - eligibleAt[i]!));
      back.push(Math.max(0, receivedAt[i]! - r.finishedAt));
      used.add(r.threadId);
    }
    const idealMs = idealMakespan(deps, durations, threads);
    const micro = opts.micro === false ? null : await roundTrip(pool);
    return {
      shape: opts.shape,
      nodes: n,
      edges: deps.reduce((a, d) => a + d.length, 0),
      task: formatTaskKind(opts.task),
      threads,
      workerThreads: workers,
      tasksPerWorker: perWorker,
      threadsUsed: used.size,
      wallMs,
      idealMs,
      criticalPathMs: criticalPath(deps, durations),
      efficiency: wallMs > 0 ? Math.min(1, idealMs / wallMs) : 1,
      tasksPerSecond: wallMs > 0 ? (n / wallMs) * 1000 : 0,
      dispatchLatencyMs: percentiles(dispatch),
      resultLatencyMs: percentiles(back),
      poolRoundTripUs: micro,
      failed: failed.length,
      skipped,
      ...(failed[0]?.error ? { firstError: failed[0].error.message } : {}),
    };
  } finally {
    await pool.destroy();
  }
}

async function roundTrip(pool: TaskPool): Promise<RoundTrip> {
  const noop: BenchTask = { type: 'bench.task', work: { kind: 'noop' } };
  const bench = new Bench({ time: 300, warmupTime: 50, throws: true });
  bench.add('pool round trip', () => pool.run(noop));
  await bench.run();
  const r = bench.getTask('pool round trip')!.result;
  if (r.state !== 'completed') throw new EngineError('internal', `bench dag: pool round trip micro-benchmark ${r.state}`);
  const us = (ms: number) => ms * 1000;
  return { mean: us(r.latency.mean), p50: us(r.latency.p50), p75: us(r.latency.p75), p99: us(r.latency.p99), max: us(r.latency.max), samples: r.latency.samplesCount };
}
