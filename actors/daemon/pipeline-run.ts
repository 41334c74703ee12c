/**
 * A pipeline execution in the daemon: the file's steps
 * run by engine/pipeline's runner with the daemon's services — queries on
 * the project's connections, builds in-process, replications through the
 * replication runner — and one Step record per executed or skipped step in
 * the state store, with output appended while the step runs.
 *
 * Scopes: `env.*` is the file's `env:` (its `${NAME}` resolved) under the
 * job's `config.vars` and the run's `vars`; `timestamp.*` is the execution's
 * start time in UTC; `store.*` and `state.*` live for this execution only.
 * Overrides: `mode` (else the job's `config.mode`) for replication
 * steps, `select` for build steps.
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import type { PipelineFile } from '../../engine/jobs/index.js';
import { runPipeline, type PipelineResult } from '../../engine/pipeline/runner.js';
import { executionScope, pipelineVars, timestampScope } from '../../engine/pipeline/scopes.js';
import type { PipelineOptions, PipelineServices, StepSink } from '../../engine/pipeline/types.js';
import { EngineError } from '../../engine/errors.js';
import type { ExecutionRecord, JobRecord, JsonObject, StateStore } from '../../engine/state/store.js';
import { changeJournal } from '../../engine/files/change-journal.js';
import { queryOnConnection, runBuildStep } from '../pipeline-services.js';
import { buildRunId } from '../../engine/targets/temp-sweep.js';
import type { TaskPool } from '../pool.js';
import type { OutputFeed } from './output-feed.js';
import type { LineRouter } from './line-router.js';
import { loadReplicationFile, runReplicationFile } from './replication-work.js';

/** What a pipeline execution needs from the daemon (a subset of job-kinds' KindContext). */
export interface PipelineRunContext {
  readonly exec: ExecutionRecord;
  readonly job: JobRecord | undefined;
  readonly store: StateStore;
  readonly connections: ConnectionRegistry;
  /** Lookup: run vars, job vars, then the env layers. */
  readonly lookup: (name: string) => string | undefined;
  /** The project root; absent → the pipeline cannot run. */
  readonly projectRoot?: string;
  readonly allowCommandSteps?: boolean;
  /** Replication steps run their PostgreSQL and file streams on the pool. */
  readonly pool?: TaskPool;
  readonly lines?: LineRouter;
}

export interface PipelineRunOutcome {
  readonly status: PipelineResult['status'];
  readonly error: string | null;
  readonly rows: number;
  readonly bytes: number;
  readonly build: JsonObject | null;
}

/** Test hooks: shorter retry and kill delays, a lower step limit, extra services. */
export type PipelineRunTuning = Pick<PipelineOptions, 'stepLimit' | 'retryDelayMs' | 'killGraceMs'> & {
  readonly replication?: PipelineServices['replication'];
};

/**
 * Step records and ordered output appends in the store; `flushed()` waits for
 * every write. The execution's rows and bytes follow the replication and
 * build steps as they finish.
 */
function storeSink(store: StateStore, execId: string, redact: (text: string) => string, feed: OutputFeed | undefined) {
  const chains = new Map<string, Promise<void>>();
  const totals = { rows: 0, bytes: 0 };
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    // Not p.finally(): its promise rejects with p, and nobody awaits it — an unhandled rejection
    // (a write refused to a fenced daemon, a lost connection) would end the process.
    const forget = () => void pending.delete(p);
    p.then(forget, forget);
    return p;
  };
  const sink: StepSink = {
    async record(e) {
      const write = async () => {
        await store.upsertStep({
          exec_id: execId,
          step_id: e.stepId,
          type: e.type,
          status: e.status,
          error: e.error === null ? null : redact(e.error),
          start_time: e.startTime,
          end_time: e.endTime,
          state: e.state === null ? null : (e.state as JsonObject),
        });
      };
      // A final record waits for the step's output appended so far.
      const before = chains.get(e.stepId) ?? Promise.resolve();
      let p = before.then(write);
      const counts = e.state !== null && typeof e.state === 'object' && !Array.isArray(e.state) ? (e.state as Record<string, unknown>) : undefined;
      if ((e.type === 'build' || e.type === 'replication') && e.status !== 'running' && counts !== undefined) {
        totals.rows += typeof counts.rows === 'number' ? counts.rows : 0;
        totals.bytes += typeof counts.bytes === 'number' ? counts.bytes : 0;
        const now = { ...totals };
        p = p.then(async () => void (await store.updateExecution(execId, now)));
      }
      chains.set(e.stepId, p.catch(() => {}));
      await track(p);
    },
    output(stepId, line) {
      const before = chains.get(stepId) ?? Promise.resolve();
      const text = `${redact(line)}\n`;
      // Published once stored (see output-feed.ts).
      const p = before.then(() => store.appendStepOutput(execId, stepId, text)).then(() => feed?.publish(execId, stepId, text), () => {});
      chains.set(stepId, p);
      void track(p);
    },
  };
  return { sink, flushed: async () => void (await Promise.allSettled([...pending])) };
}

export async function runPipelineExecution(file: PipelineFile, ctx: PipelineRunContext, signal: AbortSignal, tuning: PipelineRunTuning = {}): Promise<PipelineRunOutcome> {
  const { exec } = ctx;
  if (ctx.projectRoot === undefined) return { status: 'error', error: 'pipelines need the project root (daemon wiring)', rows: 0, bytes: 0, build: null };
  const runVars = (exec.overrides?.vars ?? {}) as Record<string, unknown>;
  const jobVars = (ctx.job?.config.vars ?? {}) as Record<string, unknown>;
  const vars = pipelineVars(file.env, jobVars, runVars, ctx.lookup);
  const mode = (exec.overrides?.mode as string | undefined) ?? ctx.job?.config.mode ?? undefined;
  const select = exec.overrides?.select as readonly string[] | undefined;
  const { sink, flushed } = storeSink(ctx.store, exec.exec_id, (t) => ctx.connections.redact(t), ctx.lines?.output);

  const projectRoot = ctx.projectRoot;
  const { pool, lines } = ctx;
  const own = (o: Readonly<Record<string, unknown>> | undefined, k: string) => o !== undefined && Object.prototype.hasOwnProperty.call(o, k);
  // Replication steps: the file's streams as the replication runner runs them, without task records.
  const replication: PipelineServices['replication'] =
    tuning.replication ??
    (pool && lines
      ? async (step, c) => {
          const file = loadReplicationFile(projectRoot, step.file, ctx.connections);
          const r = await runReplicationFile(
            file,
            {
              pool,
              lines,
              connections: ctx.connections,
              projectRoot,
              execId: exec.exec_id,
              start: new Date(exec.start_time),
              streams: step.streams ?? [],
              mode: step.mode ?? null,
              // The step's `vars` win over the run and job vars.
              vars: (name) => (own(step.vars, name) ? String(step.vars![name]) : own(runVars, name) ? String(runVars[name]) : own(jobVars, name) ? String(jobVars[name]) : undefined),
              env: ctx.lookup,
              watermarks: { store: ctx.store, scope: `${exec.project_id}:${step.file}` },
            },
            c.signal,
            c.log,
            ctx.job?.config.threads ?? 1,
          );
          if (r.status === 'cancelled') throw new EngineError('cancelled', 'cancelled');
          const state = { status: r.status, rows: r.rows, bytes: r.bytes, tasks: r.tasks.map((t) => ({ ...t })) };
          return r.failure === undefined ? { state } : { state, failure: r.failure };
        }
      : undefined);
  const services: PipelineServices = {
    query: queryOnConnection,
    // The daemon keeps each build directory's compile in memory and learns of changed files from a journal.
    build: (step, c) => runBuildStep(step, c, { connections: ctx.connections, pipeline: options, vars: vars.lookup, runId: buildRunId(exec.exec_id), changes: changeJournal, ...(pool ? { pool } : {}) }),
    ...(replication ? { replication } : {}),
  };
  const options: PipelineOptions = {
    projectRoot,
    connections: ctx.connections,
    services,
    allowCommandSteps: ctx.allowCommandSteps ?? false,
    ...(tuning.stepLimit !== undefined ? { stepLimit: tuning.stepLimit } : {}),
    ...(tuning.retryDelayMs !== undefined ? { retryDelayMs: tuning.retryDelayMs } : {}),
    ...(tuning.killGraceMs !== undefined ? { killGraceMs: tuning.killGraceMs } : {}),
  };
  const result = await runPipeline({
    steps: file.steps,
    scopes: {
      env: vars.env,
      store: {},
      state: {},
      timestamp: timestampScope(new Date(exec.start_time)),
      execution: executionScope(exec),
    },
    vars: vars.lookup,
    sink,
    signal,
    options,
    overrides: { ...(mode ? { mode } : {}), ...(select ? { select } : {}) },
  });
  await flushed();
  return { status: result.status, error: result.error === null ? null : ctx.connections.redact(result.error), rows: result.rows, bytes: result.bytes, build: result.build as JsonObject | null };
}
