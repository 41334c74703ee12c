/**
 * How each job kind runs inside an execution: one entry per
 * kind, so adding a kind is adding an entry, not an `if` chain in the
 * execution service. Task kinds (query, replication, monitor) turn the file
 * into task works run by the supervisor; pipelines run steps.
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import type { JobFile } from '../../engine/jobs/index.js';
import type { Logger } from '../../engine/log.js';
import type { ExecutionRecord, ExecutionStatus, JobRecord, JsonObject, StateStore } from '../../engine/state/store.js';
import type { TaskPool } from '../pool.js';
import type { LineRouter } from './line-router.js';
import { monitorTaskWorks } from './monitor-work.js';
import { runPipelineExecution } from './pipeline-run.js';
import { queryTaskWork } from './query-work.js';
import { replicationTaskWorks } from './replication-work.js';
import type { TaskWork } from './task-runner.js';

export interface KindContext {
  readonly exec: ExecutionRecord;
  /** The job as it is now (undefined when it was deleted after the run was requested). */
  readonly job: JobRecord | undefined;
  readonly store: StateStore;
  readonly pool: TaskPool;
  readonly lines: LineRouter;
  readonly logger: Logger;
  readonly connections: ConnectionRegistry;
  /** `${NAME}` lookup: run vars, job vars, then the env layers. */
  readonly lookup: (name: string) => string | undefined;
  /** The project root (`<data-dir>/projects/<id>/files`): pipeline steps resolve project files against it. */
  readonly projectRoot?: string;
  /** `--allow-command-steps`. */
  readonly allowCommandSteps?: boolean;
}

/** The outcome of a non-task kind (pipelines): the execution's final fields. */
export interface KindOutcome {
  readonly status: ExecutionStatus;
  readonly error: string | null;
  readonly rows: number;
  readonly bytes: number;
  readonly build?: JsonObject | null;
}

export type KindRunner<F extends JobFile = JobFile> =
  | { readonly style: 'tasks'; readonly tasks: (file: F, ctx: KindContext) => Promise<TaskWork[]>; readonly threads: (ctx: KindContext) => number }
  | { readonly style: 'steps'; readonly run: (file: F, ctx: KindContext, signal: AbortSignal) => Promise<KindOutcome> };

type Registry = { readonly [K in JobFile['kind']]?: KindRunner<Extract<JobFile, { kind: K }>> };

export const JOB_KINDS: Registry = {
  // Steps in order, one Step record per executed step.
  pipeline: { style: 'steps', run: (file, ctx, signal) => runPipelineExecution(file, ctx, signal) },
  query: {
    style: 'tasks',
    tasks: async (file, ctx) => [queryTaskWork({ connection: file.connection, statements: file.statements.map((s) => s.text) }, ctx.exec, { pool: ctx.pool, lines: ctx.lines, connections: () => ctx.connections }, ctx.lookup)],
    threads: () => 1,
  },
  // One task per resolved object, run sequentially.
  monitor: { style: 'tasks', tasks: (file, ctx) => monitorTaskWorks(file, ctx), threads: () => 1 },
  // One task per stream after wildcard expansion, up to config.threads at a time.
  replication: { style: 'tasks', tasks: (file, ctx) => replicationTaskWorks(file, ctx), threads: (ctx) => ctx.job?.config.threads ?? 1 },
};

export function kindRunner(kind: JobFile['kind']): KindRunner | undefined {
  return JOB_KINDS[kind] as KindRunner | undefined;
}
