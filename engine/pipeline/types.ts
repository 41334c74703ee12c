/**
 * What the pipeline runner needs from its host: where
 * step records go, and the services that touch databases, builds and
 * replications. The engine defines the shapes; the daemon (and the build
 * runner, for model hooks) provide them, so nothing here imports actors/.
 */
import type { Connection, ConnectionRegistry } from '../connections/index.js';
import type { ExecutionStatus } from '../state/store.js';
import type { BuildStep, ReplicationStep } from '../jobs/index.js';
import type { Value } from './evaluate.js';

export type StepStatus = Extract<ExecutionStatus, 'running' | 'success' | 'warning' | 'error' | 'skipped' | 'cancelled'>;

/** One Step record as the runner reports it. */
export interface StepEvent {
  readonly stepId: string;
  readonly type: string;
  readonly status: StepStatus;
  readonly error: string | null;
  readonly startTime: string | null;
  readonly endTime: string | null;
  readonly state: Value | null;
}

/**
 * Where step records and their output go. `record` is called with status
 * `running` when a step starts and again with its final status; a skipped
 * step gets one call. `output` lines of a step arrive after its `running`
 * record and before its final one.
 */
export interface StepSink {
  record(e: StepEvent): Promise<void>;
  output(stepId: string, line: string): void;
}

/** The result of the last statement of a query step. */
export interface QueryStepResult {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** Rows the last statement returned or affected. */
  readonly count: number;
}

/** A build step with every template resolved. */
export type ResolvedBuildStep = Omit<BuildStep, 'id' | 'name' | 'if' | 'on_failure' | 'goto' | 'position' | 'type' | 'vars' | 'env'> & {
  /** Absolute project directory. */
  readonly dir: string;
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, string>>;
};

/** What a build step publishes: the run output object, and whether the build failed. */
export interface BuildStepResult {
  readonly state: Readonly<Record<string, Value>>;
  /** `build failed: <summary>` when set. */
  readonly failure?: string;
}

export interface ResolvedReplicationStep extends Omit<ReplicationStep, 'id' | 'name' | 'if' | 'on_failure' | 'goto' | 'position' | 'type'> {
  /** Project file name of the replication file. */
  readonly file: string;
}

export interface ReplicationStepResult {
  /** `{status, rows, bytes, tasks: [...]}`. */
  readonly state: Readonly<Record<string, Value>>;
  /** Set when the replication did not succeed: the step fails with it. */
  readonly failure?: string;
}

export interface StepServiceContext {
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
}

/** Database, build and replication work, provided by the host. */
export interface PipelineServices {
  /** Runs statements in order on a database connection; the last one's result comes back. */
  query(connection: Connection, statements: readonly string[], ctx: StepServiceContext): Promise<QueryStepResult>;
  /** Runs a build step in-process. */
  build?(step: ResolvedBuildStep, ctx: StepServiceContext & { readonly hooks: ModelHookScope }): Promise<BuildStepResult>;
  /** Runs a replication file; absent when this host has no replication runner. */
  replication?(step: ResolvedReplicationStep, ctx: StepServiceContext): Promise<ReplicationStepResult>;
}

/** What model hooks inside a build step share with the pipeline. */
export interface ModelHookScope {
  readonly store: Record<string, Value>;
  readonly state: Record<string, Value>;
}

export interface PipelineOptions {
  /** The project root: `file://`, `working_dir` and `build` resolve against it. */
  readonly projectRoot: string;
  readonly connections: ConnectionRegistry;
  readonly services: PipelineServices;
  /** `--allow-command-steps`. */
  readonly allowCommandSteps: boolean;
  /** Steps executed per run (default 10,000). */
  readonly stepLimit?: number;
  /** `on_failure: retry` delay (default 5 s). */
  readonly retryDelayMs?: number;
  /** Grace between SIGTERM and SIGKILL for command steps (default 5 s). */
  readonly killGraceMs?: number;
  readonly now?: () => Date;
}
