/**
 * `service bench dag`: the DAG throughput benchmark as a user command
 * (docs/bench-dag.md). Parsing is strict: an unknown flag or a bad value is
 * a usage error (exit 2) naming the flag.
 */
import { join } from 'node:path';
import { SHAPES, type ShapeName } from '../engine/bench/dag-shape.js';
import { parseTaskKind } from '../engine/bench/task-kind.js';
import { loadConnections } from '../engine/connections/index.js';
import { EngineError, errorChain } from '../engine/errors.js';
import type { Io } from './io.js';
import type { ParsedArgs } from './parse-command-line.js';

const usage = (message: string) => new EngineError('usage', message);

function positiveInt(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) throw usage(`${flag} must be a positive integer, got '${text}'`);
  return n;
}

/** `service bench dag`. */
export async function benchCommand(a: ParsedArgs, io: Io): Promise<number> {
  const values = Object.fromEntries([...a.values].map(([k, v]) => [k, v.at(-1)!])) as Record<string, string | undefined>;
  let opts;
  try {
    const shape = (values.shape ?? 'diamond') as ShapeName;
    if (!SHAPES.includes(shape)) throw usage(`--shape must be one of ${SHAPES.join(', ')}, got '${values.shape}'`);
    const task = parseTaskKind(values.task ?? 'sleep:50');
    if (values.connection !== undefined && task.kind !== 'sql') throw usage('--connection is only used with --task sql');
    if (values.sql !== undefined && task.kind !== 'sql') throw usage('--sql is only used with --task sql');
    let connection;
    if (task.kind === 'sql') {
      if (values.connection === undefined) throw usage('--task sql needs --connection NAME');
      connection = loadConnections({ projectEnvFile: join(process.cwd(), 'env.yaml') }).get(values.connection);
      if (!connection) {
        io.err(`fatal: connection '${values.connection}' not found (looked in ./env.yaml, ~/.service/env.yaml and URL environment variables)\n`);
        return 1;
      }
    }
    opts = {
      shape,
      nodes: positiveInt('--nodes', values.nodes, 64),
      width: positiveInt('--width', values.width, 1),
      seed: positiveInt('--seed', values.seed, 1),
      maxDeps: positiveInt('--max-deps', values['max-deps'], 3),
      threads: positiveInt('--threads', values.threads, 4),
      task,
      micro: !values['no-micro'],
      ...(connection ? { connection, sql: values.sql ?? 'select 1' } : {}),
    };
  } catch (err) {
    if (err instanceof EngineError && err.code === 'usage') {
      io.err(`error: ${err.message}\nRun 'service bench dag --help' for usage.\n`);
      return 2;
    }
    throw err;
  }
  const { runBenchDag } = await import('../actors/bench/bench-dag.js');
  let report;
  try {
    report = await runBenchDag(opts);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'usage') {
      io.err(`error: ${err.message}\nRun 'service bench dag --help' for usage.\n`);
      return 2;
    }
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
  if (values.json) io.out(JSON.stringify(report) + '\n');
  else io.out(renderReport(report));
  if (report.failed > 0) {
    io.err(`fatal: ${report.failed} of ${report.nodes} nodes failed${report.skipped > 0 ? ` (${report.skipped} skipped)` : ''}; first error: ${report.firstError ?? 'unknown'}\n`);
    return 1;
  }
  return 0;
}

type Report = Awaited<ReturnType<typeof import('../actors/bench/bench-dag.js').runBenchDag>>;

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ms';

function renderReport(r: Report): string {
  const lat = (p: Report['dispatchLatencyMs']) => `p50 ${ms(p.p50)}  p90 ${ms(p.p90)}  p99 ${ms(p.p99)}  max ${ms(p.max)}`;
  const lines = [
    `bench dag: ${r.shape}, ${r.nodes} nodes (${r.edges} edges), task ${r.task}, threads ${r.threads} (${r.workerThreads} worker threads × ${r.tasksPerWorker} tasks)`,
    `  wall            ${ms(r.wallMs)}   ideal ${ms(r.idealMs)}   critical path ${ms(r.criticalPathMs)}`,
    `  efficiency      ${r.efficiency.toFixed(3)}`,
    `  throughput      ${r.tasksPerSecond.toFixed(1)} tasks/s`,
    `  dispatch        ${lat(r.dispatchLatencyMs)}`,
    `  result          ${lat(r.resultLatencyMs)}`,
  ];
  const rt = r.poolRoundTripUs;
  if (rt) lines.push(`  pool round trip mean ${rt.mean.toFixed(0)} µs  p50 ${rt.p50.toFixed(0)} µs  p99 ${rt.p99.toFixed(0)} µs  (tinybench, ${rt.samples} samples)`);
  return lines.join('\n') + '\n';
}
