/**
 * The database and build work of pipeline steps (query, replication and
 * build steps), as engine/pipeline's `PipelineServices`:
 *
 * - `query`: statements on a PostgreSQL connection (a cancel runs
 *   `pg_cancel_backend` from the target's control path) or through the
 *   DuckDB actor that owns the file (a cancel interrupts the statement);
 * - `build`: the SQL model builder — prepare (load, target, compile,
 *   select) on a pool task when the host has a pool (the daemon: its thread
 *   serving requests never compiles; actors/pool-tasks/build-prepare.ts), then
 *   `run`/`test` through the build actor, or the node description for
 *   `list`/`compile` — publishing the run output object with `command`
 *   after `target`, and running model hooks with the same step runner.
 */
import { join, resolve } from 'node:path';
import { EngineError, errorChain } from '../engine/errors.js';
import { planProjects, type BuildRequest, type PreparedBuild, type SubProjectPlan } from '../engine/build-plan/prepare.js';
import { failureSummary, runPayload, type RunPayload } from '../engine/build-plan/run-output.js';
import { loadConnections, snapshotConnections, type Connection, type ConnectionRegistry } from '../engine/connections/index.js';
import { ChangeJournal } from '../engine/files/change-journal.js';
import type { Level, Logger } from '../engine/log.js';
import type { Value } from '../engine/pipeline/evaluate.js';
import { runModelHooks } from '../engine/pipeline/hooks.js';
import type { VarLookup } from '../engine/pipeline/render.js';
import type { BuildStepResult, ModelHookScope, PipelineOptions, QueryStepResult, ResolvedBuildStep, StepServiceContext } from '../engine/pipeline/types.js';
import { parseRangeFlag } from '../engine/range-flag.js';
import { runQueryStatements } from '../engine/jobs/query-task.js';
import { executePlan, nodeKind } from './build-run/execute-build.js';
import { prepareProjects, type BuildPrepareResult, type PreparedStep } from './pool-tasks/build-prepare.js';
import { withConnectionSession } from './connection-session.js';
import type { TaskPool } from './pool.js';
import type { ModelHooks } from './build-run/start-build.js';

const cancelled = () => new EngineError('cancelled', 'cancelled');

/** Statements in order on one database connection; the last statement's columns and rows come back. */
export async function queryOnConnection(conn: Connection, statements: readonly string[], ctx: StepServiceContext): Promise<QueryStepResult> {
  return withConnectionSession(conn, ctx.signal, async (session) => {
    const r = await runQueryStatements(session, statements, ctx.log, { keepLast: true });
    return { columns: r.last?.columns ?? [], rows: r.last?.rows ?? [], count: r.last?.count ?? 0 };
  });
}

const LABEL: Record<Level, string> = { trace: 'TRC', debug: 'DBG', info: 'INF', warn: 'WRN', error: 'ERR' };

/** A Logger writing `<LVL> <message>` lines (info and above) into a step's output. */
export function stepLogger(log: (line: string) => void, min: Level = 'info'): Logger {
  const order: Level[] = ['trace', 'debug', 'info', 'warn', 'error'];
  const enabled = (l: Level) => order.indexOf(l) >= order.indexOf(min);
  return {
    enabled,
    log: (level, message) => {
      if (enabled(level)) log(`${LABEL[level]} ${message}`);
    },
  };
}

/** `{path, target, command, ...rest}`: the step state's key order. */
function withCommand(payload: object, command: string): Record<string, Value> {
  const { path, target, ...rest } = payload as Record<string, unknown>;
  return { path, target, command, ...rest } as Record<string, Value>;
}

export interface BuildServiceDeps {
  /** The host's connections: the build's target resolves here (the daemon's project connections). */
  readonly connections?: ConnectionRegistry;
  /** What model hooks run with (the pipeline's options). */
  readonly pipeline: PipelineOptions;
  /** SERVICE_STATE location for incremental watermarks. */
  readonly state?: string;
  /** Temp-table suffix of the execution's builds (engine/targets/temp-sweep.ts). */
  readonly runId?: string;
  /** `${NAME}` in model hooks, after the step's `env`. */
  readonly vars?: VarLookup;
  /** The daemon's worker pool: the compile and PostgreSQL build nodes run on its long-lived workers. */
  readonly pool?: TaskPool;
  /**
   * The daemon: what changed under a build directory since its last compile
   * (engine/files/change-journal.ts), so a recompile looks only at those files.
   */
  readonly changes?: (dir: string) => ChangeJournal | undefined;
}

type StepContext = StepServiceContext & { readonly hooks: ModelHookScope };
type StepOutcome = { state: Record<string, Value>; payload?: RunPayload; failure?: string };

function buildRequest(step: ResolvedBuildStep, deps: BuildServiceDeps): BuildRequest {
  const changes = deps.changes?.(resolve(step.dir));
  return {
    verb: step.command,
    path: step.dir,
    target: step.target,
    select: step.select ?? [],
    exclude: step.exclude ?? [],
    schema: step.schema,
    prod: step.prod,
    vars: step.vars,
    recursive: step.recursive,
    fullRefresh: step.full_refresh ?? false,
    stepEnv: step.env,
    // The step's working directory is the build project (relative duckdb:// paths land there).
    cwd: step.dir,
    ...(deps.connections ? { connections: deps.connections } : {}),
    ...(changes ? { changes } : {}),
  };
}

/**
 * The step's projects prepared: on a pool task when the host has a pool
 * (the connections and change journal cross as snapshots), else here. The
 * compile's log lines go to the step's output.
 */
async function prepareStep(req: BuildRequest, plan: SubProjectPlan, deps: BuildServiceDeps, ctx: StepContext, logger: Logger): Promise<BuildPrepareResult> {
  const children = plan.mode === 'independent' ? plan.children : undefined;
  let r: BuildPrepareResult;
  if (deps.pool) {
    const { connections, changes, ...plain } = req;
    r = await deps.pool.run(
      {
        type: 'build.prepare',
        req: plain,
        root: plan.root,
        ...(children ? { children } : {}),
        ...(connections ? { connections: snapshotConnections(connections) } : {}),
        ...(changes instanceof ChangeJournal ? { journal: changes.snapshot() } : {}),
      },
      { signal: ctx.signal },
    );
  } else {
    r = prepareProjects(req, plan.root, children);
  }
  for (const [level, message] of r.lines) logger.log(level, message);
  if (ctx.signal.aborted) throw cancelled();
  return r;
}

/** `list`/`compile`: the prepared state; `run`/`test`: the build plan executed through the build actor. */
async function executeStep(p: PreparedStep, step: ResolvedBuildStep, ctx: StepContext, deps: BuildServiceDeps, logger: Logger): Promise<StepOutcome> {
  if (p.state !== undefined) return { state: p.state };
  const command = step.command as 'run' | 'test';
  const range = step.range === undefined ? undefined : parseRangeFlag(step.range);
  const hooks: ModelHooks = (phase, task, signal) =>
    runModelHooks(phase, task, signal, {
      options: deps.pipeline,
      vars: (name) => (step.env !== undefined && Object.prototype.hasOwnProperty.call(step.env, name) ? step.env[name] : deps.vars?.(name)),
      targetName: p.targetName,
      shared: ctx.hooks,
      log: ctx.log,
    });
  let actorCancel: (() => void) | undefined;
  const onAbort = () => actorCancel?.();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const ex = await executePlan(p.plan!, {
      verb: command,
      fullRefresh: step.full_refresh ?? false,
      noSeeds: step.no_seeds ?? false,
      threads: step.threads === undefined || step.threads < 1 ? 4 : step.threads,
      failFast: step.fail_fast ?? false,
      ...(range ? { range } : {}),
      logger,
      logLevel: 'info',
      ...(deps.state ? { state: deps.state } : {}),
      ...(deps.runId ? { runId: deps.runId } : {}),
      ...(deps.pool ? { pool: deps.pool } : {}),
      hooks,
      beforeStart: ({ actor }) => {
        actorCancel = () => actor.cancel();
        actor.events.on('node.start', (e) => logger.log('info', `[${e.index}/${e.total}] ${e.node.table} (${nodeKind(e.node)}) START`));
        actor.events.on('node.finish', (e) =>
          logger.log(e.status === 'error' ? 'error' : 'info', `[${e.index}/${e.total}] ${e.node.table} (${nodeKind(e.node)}) ${e.status === 'error' ? `FAIL: ${e.error?.message ?? ''}` : e.status === 'skipped' ? 'SKIP' : 'OK'}`),
        );
        if (ctx.signal.aborted) actor.cancel();
      },
    });
    if (ctx.signal.aborted) throw cancelled();
    // Each record also says when and on which thread its node ran (the console's Gantt chart of the step).
    const payload = runPayload(p.root, p.targetName, ex.records.map((r, i) => ({ ...r, ...ex.timing[i]! })));
    logger.log('info', `build ${command}: ${payload.ok} ok, ${payload.failed} failed, ${payload.skipped} skipped`);
    return { state: withCommand(payload, command), payload, ...(payload.failed > 0 ? { failure: failureSummary(ex.records) } : {}) };
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** Runs one build step: prepared (on the host's pool when it has one), then executed here. */
export async function runBuildStep(step: ResolvedBuildStep, ctx: StepContext, deps: BuildServiceDeps): Promise<BuildStepResult> {
  const logger = stepLogger(ctx.log);
  const req = buildRequest(step, deps);
  let plan: SubProjectPlan;
  try {
    plan = planProjects(req);
  } catch (err) {
    return { state: withCommand(runPayload(step.dir, step.target ?? '', []), step.command), failure: errorChain(err) };
  }
  const { projects } = await prepareStep(req, plan, deps, ctx, logger);
  if (plan.mode === 'single') {
    const only = projects[0]!;
    if (only.prepared === undefined) return { state: withCommand(runPayload(plan.root, step.target ?? '', []), step.command), failure: only.error ?? 'not prepared' };
    const r = await executeStep(only.prepared, step, ctx, deps, logger);
    return r.failure === undefined ? { state: r.state } : { state: r.state, failure: r.failure };
  }
  return runSubProjects(projects, plan.root, step, ctx, deps, logger);
}

/** Independent sub-projects: one after another, a child that failed to load runs nothing. */
async function runSubProjects(projects: BuildPrepareResult['projects'], root: string, step: ResolvedBuildStep, ctx: StepContext, deps: BuildServiceDeps, logger: Logger): Promise<BuildStepResult> {
  const command = step.command;
  const subs: Record<string, Value>[] = [];
  const fatals: string[] = [];
  const all: RunPayload['results'][number][] = [];
  for (const r of projects) {
    if (ctx.signal.aborted) throw cancelled();
    if (r.prepared === undefined) {
      subs.push({ ...runPayload(r.path, '', []), error: r.error ?? '' } as unknown as Record<string, Value>);
      fatals.push(`could not compile sub-project ${r.dir}: ${r.error}`);
      continue;
    }
    try {
      const ex = await executeStep(r.prepared, step, ctx, deps, logger);
      const { command: _c, ...rest } = ex.state;
      subs.push({ path: rest.path!, target: rest.target!, error: '', ...rest });
      if (ex.payload) all.push(...ex.payload.results);
      if (ex.failure !== undefined) fatals.push(`could not execute sub-project ${r.dir}: ${ex.failure}`);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      const msg = errorChain(err);
      subs.push({ ...runPayload(r.path, r.prepared.targetName, []), error: msg } as unknown as Record<string, Value>);
      fatals.push(`could not execute sub-project ${r.dir}: ${msg}`);
    }
  }
  const agg = runPayload(root, step.target ?? '', all);
  const listLike = command === 'list' || command === 'compile';
  const total = listLike ? subs.reduce((a, s) => a + (typeof s.total === 'number' ? s.total : 0), 0) : agg.total;
  const state: Record<string, Value> = {
    path: root,
    target: step.target ?? '',
    command,
    sub_projects: subs,
    total,
    ok: listLike ? total : agg.ok,
    failed: listLike ? 0 : agg.failed,
    skipped: listLike ? 0 : agg.skipped,
    ...(listLike ? {} : { rows: agg.rows, bytes: agg.bytes, ok_names: agg.ok_names }),
  };
  return fatals.length > 0 ? { state, failure: fatals.join('; ') } : { state };
}

/**
 * Model hooks of a local `service build run`: the
 * same step runner, with the build project as the root for `file://`, the
 * build's connections (the project's `env.yaml`, the host env file, the
 * environment), a store and state shared by the run's hooks, and hook
 * output as INF log lines. Command hooks run: the CLI is the user's own
 * process (the daemon's `--allow-command-steps` guards the server).
 */
export function localModelHooks(p: PreparedBuild, logger: Logger): ModelHooks {
  let options: PipelineOptions | undefined;
  const shared: ModelHookScope = { store: {}, state: {} };
  return (phase, task, signal) =>
    runModelHooks(phase, task, signal, {
      // Connections are read when the first hook runs: most builds have none.
      options: (options ??= {
        projectRoot: p.root,
        connections: loadConnections({ projectEnvFile: join(p.root, 'env.yaml'), env: process.env }),
        services: { query: queryOnConnection },
        allowCommandSteps: true,
      }),
      vars: (name) => process.env[name],
      targetName: p.targetName,
      shared,
      log: (line) => logger.log('info', line),
    });
}
