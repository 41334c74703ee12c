/**
 * `service bench dag`: the DAG throughput benchmark as a user command
 * (docs/bench-dag.md). Parsing is strict: an unknown flag or a bad value is
 * a usage error (exit 2) naming the flag.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SHAPES, type ShapeName } from '../engine/bench/dag-shape.js';
import { parseTaskKind } from '../engine/bench/task-kind.js';
import { loadConnections } from '../engine/connections/index.js';
import { EngineError, errorChain } from '../engine/errors.js';
import type { Io } from './io.js';

export const BENCH_DAG_HELP = `Usage: service bench dag [options]

Runs a synthetic DAG through the supervisor and the worker pool and compares
the wall time with the ideal schedule of the same task durations.

Options:
  --shape NAME        chain, wide, diamond or random (default: diamond)
  --nodes N           number of nodes (default: 64)
  --width W           chain: number of independent chains (default: 1)
  --seed S            random: PRNG seed (default: 1)
  --max-deps K        random: most parents per node (default: 3)
  --task KIND         noop, sleep:<ms>, cpu:<ms> or sql (default: sleep:50)
  --connection NAME   sql: a postgres connection (env.yaml here, ~/.service/env.yaml, URL variables)
  --sql TEXT          sql: the statement each node runs (default: select 1)
  --threads N         tasks running at once (default: 4)
  --no-micro          skip the tinybench pool round-trip measurement
  --json              print the report as one JSON object on stdout
  -h, --help          show this help

Examples:
  npx service bench dag --shape diamond --nodes 64 --task sleep:50 --threads 4
  npx service bench dag --shape chain --width 4 --nodes 64 --task sql --connection pg --sql "select pg_sleep(0.05)" --json
  npx service bench dag --shape random --seed 7 --nodes 1000 --task noop --threads 8
`;

const usage = (message: string) => new EngineError('usage', message);

function positiveInt(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) throw usage(`${flag} must be a positive integer, got '${text}'`);
  return n;
}

export async function benchCommand(argv: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.out(BENCH_DAG_HELP);
    return 0;
  }
  if (sub !== 'dag') {
    io.err(`error: unknown bench command '${sub}', expected dag\nRun 'service bench dag --help' for usage.\n`);
    return 2;
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: [...rest],
      strict: true,
      allowPositionals: false,
      options: {
        shape: { type: 'string' },
        nodes: { type: 'string' },
        width: { type: 'string' },
        seed: { type: 'string' },
        'max-deps': { type: 'string' },
        task: { type: 'string' },
        connection: { type: 'string' },
        sql: { type: 'string' },
        threads: { type: 'string' },
        'no-micro': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    // node:util names the flag in its message ("Unknown option '--x'", "Option '--nodes <value>' argument missing").
    io.err(`error: ${(err as Error).message}\nRun 'service bench dag --help' for usage.\n`);
    return 2;
  }
  if (values.help) {
    io.out(BENCH_DAG_HELP);
    return 0;
  }
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
  const { runBenchDag } = await import('../actors/bench-dag.js');
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

type Report = Awaited<ReturnType<typeof import('../actors/bench-dag.js').runBenchDag>>;

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
