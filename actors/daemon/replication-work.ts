/**
 * The tasks of a replication execution: resolve the two
 * connections, expand wildcard and glob streams against the source catalog,
 * apply the job's `streams` subset and mode override (or the run's), then
 * one task per stream. A stream whose source and target are PostgreSQL or
 * file connections runs on a pool worker (`replication.stream`); a stream
 * with a DuckDB database file on either side is a job of the file's actor
 * and runs on that file's own thread, which serialises everything that
 * touches the file. Nothing of a stream runs on this thread.
 *
 * Also the replication runner of pipeline `replication` steps:
 * `runReplicationFile` loads a replication file and runs its tasks without
 * task records, returning the step state.
 */
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection, ConnectionRegistry } from '../../engine/connections/index.js';
import { connectionKind } from '../../engine/connections/index.js';
import { EngineError, errorChain } from '../../engine/errors.js';
import { validateJobFile, type ReplicationFile } from '../../engine/jobs/index.js';
import {
  PgSession, expandStreams, fileEnvLookup, fileRoot, listFiles, needsDuckdbActor, pgTables, planReplication,
  selectStreams, type SourceCatalog, type StreamPlan,
} from '../../engine/replication/index.js';
import type { ExecutionRecord, JobRecord, StateStore } from '../../engine/state/store.js';
import { duckdbActor, duckdbKey, type DuckDbThread } from '../duckdb-actor.js';
import type { TaskPool } from '../pool.js';
import type { LineRouter } from './line-router.js';
import type { TaskResult, TaskWork } from './task-runner.js';

/** What replication tasks need from the execution (a subset of the job-kind context). */
export interface ReplicationContext {
  readonly exec: ExecutionRecord;
  readonly job: JobRecord | undefined;
  readonly store: StateStore;
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly connections: ConnectionRegistry;
  /** Lookup: run vars, job vars, then the env layers. */
  readonly lookup: (name: string) => string | undefined;
  /** Resolves `file://` SQL of streams. */
  readonly projectRoot?: string;
}

/** Everything a replication run needs, for executions and pipeline steps alike. */
export interface ReplicationRun {
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly connections: ConnectionRegistry;
  readonly projectRoot?: string;
  readonly execId: string;
  readonly start: Date;
  /** Stream subset; empty = all. */
  readonly streams: readonly string[];
  readonly mode: string | null;
  /** Run and job vars (they win over the file's `env:`). */
  readonly vars: (name: string) => string | undefined;
  /** The layers below the file's `env:` (env files, process environment). */
  readonly env: (name: string) => string | undefined;
  /** Watermarks of incremental file streams without keys (absent: every run reads every file). */
  readonly watermarks?: { readonly store: StateStore; readonly scope: string };
  /** Called when a disabled stream's task ends `skipped`. */
  readonly onSkipped?: (plan: StreamPlan) => Promise<void>;
}

const WATERMARK_TARGET = 'replication';

function requireConnection(registry: ConnectionRegistry, name: string): Connection {
  const c = registry.get(name);
  if (!c) throw new EngineError('node', `connection ${name} not found`);
  return c;
}

function projectFileReader(root: string | undefined): (path: string) => string {
  return (path) => {
    if (root === undefined) throw new EngineError('node', `file "${path}" cannot be read: the project root is unknown`);
    try {
      return readFileSync(join(root, path), 'utf8');
    } catch {
      throw new EngineError('node', `file "${path}" does not exist`);
    }
  };
}

/** The source catalog: PostgreSQL on a short session, DuckDB through the file's actor, files from disk. */
function catalogOf(source: Connection): SourceCatalog {
  const signal = new AbortController().signal;
  return {
    async tables(schema) {
      if (source.type === 'postgres') {
        const s = await PgSession.open(source, signal);
        try {
          return await pgTables(s, schema);
        } finally {
          await s.close();
        }
      }
      if (source.type === 'duckdb') return duckdbActor(source.path).run((thread) => thread.run({ type: 'duckdb.tables', path: thread.path, schema }), { signal });
      return [];
    },
    async files(key) {
      if (source.type !== 'file') return [];
      return listFiles(fileRoot(source), key);
    },
  };
}

function defaultSchema(c: Connection): string {
  return c.type === 'postgres' || c.type === 'duckdb' ? c.schema : '';
}

function runOne(plan: StreamPlan, run: ReplicationRun, registry: ConnectionRegistry): TaskWork['run'] {
  return async (signal, log) => {
    const say = (line: string) => log(registry.redact(line));
    if (plan.disabled) {
      say(`stream ${plan.streamName} is disabled: skipped`);
      await run.onSkipped?.(plan);
      return { rows: 0, bytes: 0, skipped: true };
    }
    let outcome;
    try {
      if (needsDuckdbActor(plan)) {
        // The stream runs on the thread of the DuckDB file it writes (or, for a DuckDB source, reads).
        const file = plan.target.type === 'duckdb' ? plan.target.path : (plan.source as Extract<Connection, { type: 'duckdb' }>).path;
        const other = plan.source.type === 'duckdb' && plan.target.type === 'duckdb' && duckdbKey(plan.source.path) !== duckdbKey(file) ? plan.source.path : undefined;
        const route = run.lines.open(say);
        try {
          const stream = (thread: DuckDbThread) => thread.run({ type: 'replication.stream', plan, log: route.route, duckdbFile: thread.path });
          if (other === undefined) outcome = await duckdbActor(file).run(stream, { signal });
          else {
            // DuckDB → another DuckDB file: the source's actor is held (idle) while the target's thread reads it,
            // both taken in path order so two streams in opposite directions cannot wait on each other.
            const [first, second] = [duckdbKey(file), duckdbKey(other)].sort();
            const target = duckdbKey(file);
            outcome = await duckdbActor(first!).run((a) => duckdbActor(second!).run((b) => stream(a.path === target ? a : b), { signal }), { signal });
          }
        } finally {
          await route.close();
        }
      } else {
        const route = run.lines.open(say);
        try {
          outcome = await run.pool.run({ type: 'replication.stream', plan, log: route.route }, { signal });
        } finally {
          await route.close();
        }
      }
    } catch (err) {
      if (signal.aborted || (err instanceof EngineError && err.code === 'cancelled')) throw new EngineError('cancelled', 'cancelled');
      throw new EngineError(err instanceof EngineError ? err.code : 'node', registry.redact(errorChain(err)));
    }
    if (outcome.filesWatermark !== undefined && run.watermarks !== undefined) {
      await run.watermarks.store.setWatermark(WATERMARK_TARGET, `${run.watermarks.scope}#${plan.streamName}`, String(outcome.filesWatermark));
    }
    const result: TaskResult = { rows: outcome.rows, bytes: outcome.bytes };
    return result;
  };
}

/** The plans of one replication run, in task order. */
export async function replicationPlans(file: ReplicationFile, run: ReplicationRun): Promise<StreamPlan[]> {
  const registry = run.connections;
  const source = requireConnection(registry, file.source);
  const target = requireConnection(registry, file.target);
  const kind = source.type === 'file' ? 'file' : 'database';
  const expanded = selectStreams(await expandStreams(file, kind, defaultSchema(source), catalogOf(source)), run.streams);
  const watermarks = new Map<string, number>();
  if (run.watermarks !== undefined && source.type === 'file') {
    for (const s of expanded) {
      const w = await run.watermarks.store.getWatermark(WATERMARK_TARGET, `${run.watermarks.scope}#${s.name}`);
      if (w !== undefined && Number.isFinite(Number(w.value))) watermarks.set(s.name, Number(w.value));
    }
  }
  return planReplication({
    file,
    source,
    target,
    streams: expanded,
    modeOverride: run.mode,
    lookup: fileEnvLookup(file.env, run.vars, run.env),
    start: run.start,
    execId: run.execId,
    readProjectFile: projectFileReader(run.projectRoot),
    fileWatermark: (name) => watermarks.get(name),
  });
}

function worksOf(plans: readonly StreamPlan[], run: ReplicationRun): TaskWork[] {
  return plans.map((plan) => ({ taskId: plan.taskId, streamName: plan.streamName, object: plan.object, mode: plan.mode, run: runOne(plan, run, run.connections) }));
}

export async function replicationWorks(file: ReplicationFile, run: ReplicationRun): Promise<TaskWork[]> {
  return worksOf(await replicationPlans(file, run), run);
}

function varsOf(exec: ExecutionRecord, job: JobRecord | undefined): (name: string) => string | undefined {
  const layers = [(exec.overrides?.vars ?? {}) as Record<string, unknown>, (job?.config.vars ?? {}) as Record<string, unknown>];
  return (name) => {
    for (const vars of layers) if (Object.hasOwn(vars, name)) return String(vars[name]);
    return undefined;
  };
}

/** Replication: the execution's tasks (the `replication` entry of job-kinds.ts). */
export async function replicationTaskWorks(file: ReplicationFile, ctx: ReplicationContext): Promise<TaskWork[]> {
  const { exec } = ctx;
  return replicationWorks(file, {
    pool: ctx.pool,
    lines: ctx.lines,
    connections: ctx.connections,
    ...(ctx.projectRoot !== undefined ? { projectRoot: ctx.projectRoot } : {}),
    execId: exec.exec_id,
    start: new Date(exec.start_time),
    streams: (exec.overrides?.streams as readonly string[] | undefined) ?? ctx.job?.streams ?? [],
    mode: (exec.overrides?.mode as string | undefined) ?? ctx.job?.config.mode ?? null,
    vars: varsOf(exec, ctx.job),
    env: ctx.lookup,
    watermarks: { store: ctx.store, scope: `${exec.project_id}:${exec.file_name}` },
  });
}

export interface ReplicationFileRun {
  readonly status: 'success' | 'error' | 'skipped' | 'cancelled';
  readonly rows: number;
  readonly bytes: number;
  readonly tasks: readonly { stream_name: string; object: string | null; status: string; rows: number; bytes: number; error: string | null }[];
  /** `<stream>: <message>` of the first failure, `(and n more)`. */
  readonly failure?: string;
}

/** Loads and validates a replication file of the project (pipeline `replication` steps). */
export function loadReplicationFile(projectRoot: string, name: string, connections: ConnectionRegistry): ReplicationFile {
  const path = join(projectRoot, name);
  if (!existsSync(path)) throw new EngineError('node', `file "${name}" does not exist`);
  const v = validateJobFile(name, readFileSync(path, 'utf8'), {
    fileExists: (p) => existsSync(join(projectRoot, p)),
    connectionKind: (n) => {
      const c = connections.get(n);
      return c === undefined ? undefined : connectionKind(c.type);
    },
    readFile: (p) => {
      const abs = join(projectRoot, p);
      return existsSync(abs) && statSync(abs).isFile() ? readFileSync(abs, 'utf8') : undefined;
    },
  }, { as: 'replication' });
  if (v.kind !== 'replication' || v.parsed === undefined) {
    const first = v.problems[0];
    throw new EngineError('node', `replication file "${name}" is invalid${first ? `: ${first.message}` : ''}`);
  }
  return v.parsed;
}

/**
 * Runs every task of a replication, `threads` at a time, without task
 * records (pipeline steps publish the result as their state instead).
 */
export async function runReplicationFile(file: ReplicationFile, run: ReplicationRun, signal: AbortSignal, log: (line: string) => void, threads = 1): Promise<ReplicationFileRun> {
  const plans = await replicationPlans(file, run);
  const works = worksOf(plans, run);
  const results: { stream_name: string; object: string | null; status: string; rows: number; bytes: number; error: string | null }[] = works.map((w) => ({
    stream_name: w.streamName, object: w.object, status: 'queued', rows: 0, bytes: 0, error: null,
  }));
  const disabled = new Set(plans.filter((p) => p.disabled).map((p) => p.taskId));
  let next = 0;
  const worker = async () => {
    while (next < works.length) {
      const i = next++;
      const w = works[i]!;
      if (signal.aborted) {
        results[i]!.status = 'cancelled';
        continue;
      }
      try {
        const r = await w.run(signal, (line) => log(`[${w.streamName}] ${line}`));
        results[i] = { ...results[i]!, status: disabled.has(w.taskId) ? 'skipped' : 'success', rows: r.rows, bytes: r.bytes };
      } catch (err) {
        const cancelled = signal.aborted || (err instanceof EngineError && err.code === 'cancelled');
        results[i] = { ...results[i]!, status: cancelled ? 'cancelled' : 'error', error: cancelled ? 'cancelled' : errorChain(err) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(threads, works.length)) }, worker));
  const failed = results.filter((r) => r.status === 'error');
  const status = signal.aborted ? 'cancelled' : failed.length > 0 ? 'error' : results.every((r) => r.status === 'skipped') ? 'skipped' : 'success';
  return {
    status,
    rows: results.reduce((a, r) => a + r.rows, 0),
    bytes: results.reduce((a, r) => a + r.bytes, 0),
    tasks: results,
    ...(failed.length > 0 ? { failure: `${failed[0]!.stream_name}: ${failed[0]!.error}${failed.length > 1 ? ` (and ${failed.length - 1} more)` : ''}` } : {}),
  };
}

/** A pipeline `replication` step as the pipeline runner resolves it. */
export interface ReplicationStepInput {
  /** Project file name of the replication file. */
  readonly file: string;
  readonly streams?: readonly string[];
  readonly mode?: string;
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface ReplicationStepDeps {
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly connections: ConnectionRegistry;
  readonly projectRoot: string;
  readonly execId: string;
  readonly start: Date;
  /** Run and job vars (the step's `vars` win over them; they win over the file's `env:`). */
  readonly vars: (name: string) => string | undefined;
  /** The layers below the file's `env:`. */
  readonly env: (name: string) => string | undefined;
  /** Watermarks of incremental file streams, scoped by project and replication file. */
  readonly watermarks?: { readonly store: StateStore; readonly projectId: string };
}

/**
 * The replication runner of pipeline steps: loads the step's replication
 * file, runs its streams one at a time with the step's streams, mode and vars
 * overrides, and returns the step state `{status, rows, bytes, tasks}` with
 * `failure` set when a stream failed.
 */
export function replicationStepService(deps: ReplicationStepDeps) {
  let calls = 0;
  return async (step: ReplicationStepInput, ctx: { readonly signal: AbortSignal; readonly log: (line: string) => void }) => {
    const file = loadReplicationFile(deps.projectRoot, step.file, deps.connections);
    const stepVars = step.vars ?? {};
    const r = await runReplicationFile(file, {
      pool: deps.pool,
      lines: deps.lines,
      connections: deps.connections,
      projectRoot: deps.projectRoot,
      execId: `${deps.execId}${++calls}`,
      start: deps.start,
      streams: step.streams ?? [],
      mode: step.mode ?? null,
      vars: (name) => (Object.hasOwn(stepVars, name) ? String(stepVars[name]) : deps.vars(name)),
      env: deps.env,
      ...(deps.watermarks ? { watermarks: { store: deps.watermarks.store, scope: `${deps.watermarks.projectId}:${step.file}` } } : {}),
    }, ctx.signal, ctx.log);
    return {
      state: { status: r.status, rows: r.rows, bytes: r.bytes, tasks: r.tasks.map((t) => ({ ...t })) },
      ...(r.failure !== undefined ? { failure: r.failure } : {}),
    };
  };
}
