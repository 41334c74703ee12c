/**
 * `run` / `test` of one prepared project, host-neutral:
 * plans the node tasks, starts the build actor and returns the result
 * records in DAG order. The CLI adds progress lines and signal handling
 * through `beforeStart`; a pipeline build step adds its
 * cancel signal and model hooks the same way.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { writeArtifacts, type ArtifactRun } from '../../engine/build-plan/artifacts.js';
import type { PreparedBuild } from '../../engine/build-plan/prepare.js';
import type { Connection } from '../../engine/connections/index.js';
import { EngineError } from '../../engine/errors.js';
import { planTasks } from '../../engine/build-plan/plan-tasks.js';
import type { NodeTask, TestResult } from '../../engine/build-plan/node-task.js';
import { seconds, type ResultRecord } from '../../engine/build-plan/run-output.js';
import type { Level, Logger } from '../../engine/log.js';
import type { RangeSpec } from '../../engine/range-flag.js';
import type { SchemaRef } from '../../engine/targets/index.js';
import type { TaskPool } from '../pool.js';
import type { TargetAhead } from './target-ahead.js';
import { startBuild, type BuildHandle, type BuildNode, type ModelHooks } from './start-build.js';

export interface BuildExecutionOptions {
  readonly verb: 'run' | 'test';
  /** `test --freshness`: only the source freshness checks of a dbt project. */
  readonly freshness?: boolean;
  readonly fullRefresh: boolean;
  readonly noSeeds: boolean;
  /** Requested workers (capped by the node count and the target). */
  readonly threads: number;
  readonly failFast: boolean;
  readonly range?: RangeSpec;
  readonly logger: Logger;
  readonly logLevel: Level;
  /** SERVICE_STATE location for incremental watermarks. */
  readonly state?: string;
  /** Suffix of this run's temporary tables; random unless an execution names it (engine/targets/temp-sweep.ts). */
  readonly runId?: string;
  readonly hooks?: ModelHooks;
  /** A target opened ahead of the run (borrowed, see RunnerInput.ahead). */
  readonly ahead?: TargetAhead;
  /** The host's long-lived worker pool (see RunnerInput.pool). */
  readonly pool?: TaskPool;
  /** Write dbt's run artifacts into `<project>/target/` (engine/build-plan/artifacts.ts); `args` is run_results.json's `args`. */
  readonly artifacts?: { readonly args: Readonly<Record<string, unknown>> };
  /** Called before the first dispatch: attach listeners, keep the actor to cancel it. */
  readonly beforeStart?: (handle: Omit<BuildHandle, 'finished'>) => void;
}

/** When and where one node ran, beside its result record (same index): what the web console's Gantt chart draws. */
export interface NodeTiming {
  /** Wall-clock start of its first dispatch (UTC, ms precision); null when it never ran (skipped). */
  readonly start_time: string | null;
  /** Id of the thread that ran it (a worker of the pool, or the DuckDB file's own thread); null when unknown (skipped, or failed before reporting). */
  readonly thread: number | null;
}

export interface BuildExecutionResult {
  readonly records: readonly ResultRecord[];
  /** One entry per record, same order. */
  readonly timing: readonly NodeTiming[];
  readonly durationMs: number;
  /** Every data test that ran, in DAG order of their nodes. */
  readonly tests: readonly TestResult[];
}

export function newRunId(): string {
  let id = '';
  for (let i = 0; i < 6; i++) id += String.fromCharCode(97 + randomInt(26));
  return id;
}

export const nodeKind = (t: NodeTask): string => (t.kind === 'seed' ? 'seed' : t.kind === 'test' ? 'test' : t.mode);

/**
 * What a run or test of a prepared project executes, as plain data: the
 * daemon plans on a worker thread (actors/pool-tasks/build-prepare.ts) and
 * executes the plan on its main thread.
 */
export interface BuildPlan {
  readonly root: string;
  readonly targetName: string;
  readonly connection?: Connection;
  /** In DAG order: lower-case ids, dependencies, tasks. */
  readonly nodes: readonly Omit<BuildNode, 'presetSkip'>[];
}

/** The selected nodes a run or test executes. */
function runNodes(p: PreparedBuild, o: Pick<BuildExecutionOptions, 'verb' | 'freshness'>): PreparedBuild['selected'] {
  // A dbt project's tests are nodes of their own: `test` runs only those; source freshness checks run only on request.
  const fresh = (n: PreparedBuild['selected'][number]) => n.kind === 'test' && n.freshness === true;
  if (o.freshness && p.compiled.project.format !== 'dbt') throw new EngineError('usage', '--freshness checks the sources of a dbt project; this project has no dbt_project.yml');
  return p.compiled.project.format !== 'dbt'
    ? p.selected
    : o.freshness
      ? p.selected.filter(fresh)
      : p.selected.filter((n) => !fresh(n) && (o.verb !== 'test' || n.kind === 'test'));
}

export function planBuild(p: PreparedBuild, o: Pick<BuildExecutionOptions, 'verb' | 'freshness' | 'fullRefresh'>): BuildPlan {
  const selected = runNodes(p, o);
  const tasks = planTasks(p.compiled, selected, o.verb, o.fullRefresh);
  const nodes = tasks.map((task, i) => ({ id: task.name.toLowerCase(), deps: selected[i]!.dependencies.map((d) => d.toLowerCase()), task }));
  return { root: p.root, targetName: p.targetName, ...(p.connection ? { connection: p.connection } : {}), nodes };
}

export async function executeBuild(p: PreparedBuild, o: BuildExecutionOptions): Promise<BuildExecutionResult> {
  const ran = await runPlan(planBuild(p, o), o);
  if (o.artifacts) writeRunArtifacts(p, o, ran);
  return ran.result;
}

export async function executePlan(plan: BuildPlan, o: BuildExecutionOptions): Promise<BuildExecutionResult> {
  return (await runPlan(plan, o)).result;
}

interface PlanRun {
  readonly result: BuildExecutionResult;
  readonly raw: Awaited<BuildHandle['finished']>['records'];
  readonly threads: number;
}

/** dbt's target/manifest.json and run_results.json of a finished run (a failure to write them is a warning). */
function writeRunArtifacts(p: PreparedBuild, o: BuildExecutionOptions, ran: PlanRun): void {
  const { records } = ran.result;
  const runs: ArtifactRun[] = ran.raw.map((r, i) => ({
    task: r.node,
    status: records[i]!.status,
    message: records[i]!.error,
    ...(r.startedAt !== undefined ? { startedAt: performance.timeOrigin + r.startedAt } : {}),
    durationMs: r.durationMs,
    rows: records[i]!.rows,
    tests: r.result?.tests ?? [],
    warnings: r.result?.warnings ?? [],
    ...(r.result?.compiledSql !== undefined ? { compiledSql: r.result.compiledSql } : {}),
  }));
  try {
    writeArtifacts({ compiled: p.compiled, selected: runNodes(p, o), runs, invocationId: randomUUID(), elapsedMs: ran.result.durationMs, args: o.artifacts!.args, threads: ran.threads });
  } catch (err) {
    o.logger.log('warn', `could not write the run artifacts (target/manifest.json, target/run_results.json): ${(err as Error).message}`);
  }
}

async function runPlan(plan: BuildPlan, o: BuildExecutionOptions): Promise<PlanRun> {
  const skipSeeds = o.verb === 'test' || o.noSeeds;
  const nodes: BuildNode[] = plan.nodes.map((n) => ({ ...n, presetSkip: n.task.kind === 'seed' && skipSeeds }));
  const schemas = new Map<string, SchemaRef>();
  if (o.verb === 'run') {
    for (const n of nodes) {
      if (n.presetSkip) continue;
      const r = n.task.relation;
      schemas.set(`${r.database ?? ''}.${r.schema}`, r.database ? { database: r.database, schema: r.schema } : { schema: r.schema });
    }
  }
  const started = performance.now();
  const handle = await startBuild(
    {
      nodes,
      connection: plan.connection!,
      settings: { runId: o.runId ?? newRunId(), targetName: plan.targetName, fullRefresh: o.fullRefresh, range: o.range, state: o.state },
      threads: Math.min(o.threads, Math.max(1, nodes.length)),
      failFast: o.failFast,
      schemas: [...schemas.values()],
      logger: o.logger,
      logLevel: o.logLevel,
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.ahead ? { ahead: o.ahead } : {}),
      ...(o.pool ? { pool: o.pool } : {}),
    },
    (h) => o.beforeStart?.(h),
  );
  const result = await handle.finished;
  const records: ResultRecord[] = result.records.map((r) => {
    const t = r.node;
    const outcome = r.result;
    const warnings = outcome?.warnings ?? [];
    return {
      name: t.table,
      type: t.kind,
      mode: t.kind === 'seed' ? 'full-refresh' : t.kind === 'test' ? 'test' : t.mode,
      duration: r.status === 'skipped' ? 0 : seconds(r.durationMs),
      status: r.status === 'success' ? 'success' : r.status === 'error' ? 'error' : 'skipped',
      error: r.status === 'error' ? (r.error?.message ?? 'unknown error') : r.status === 'success' ? warnings.join('; ') : '',
      // A failed ranged incremental run still reports the rows its committed chunks merged.
      rows: outcome?.rows ?? r.error?.committedRows ?? 0,
      bytes: outcome?.bytes ?? 0,
    };
  });
  // The run actor's clock is performance.now(): the time origin turns it into wall-clock time.
  const timing = result.records.map((r) => ({
    start_time: r.status !== 'skipped' && r.startedAt !== undefined ? new Date(performance.timeOrigin + r.startedAt).toISOString() : null,
    thread: r.status !== 'skipped' ? (r.result?.thread ?? null) : null,
  }));
  const tests = result.records.flatMap((r) => r.result?.tests ?? []);
  return { result: { records, timing, durationMs: performance.now() - started, tests }, raw: result.records, threads: handle.threads };
}
