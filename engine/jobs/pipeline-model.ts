/**
 * The validated form of a pipeline file: one
 * readonly record per step with a `type` discriminant. String values are kept
 * as written — `{…}` templates and `${NAME}` are resolved by the runner at
 * run time — and every expression in them is known to parse.
 */
import type { EnvValue } from './fields.js';
import type { ReplicationMode } from './replication-model.js';

export const STEP_TYPES = ['log', 'replication', 'query', 'build', 'http', 'command', 'check', 'group', 'set', 'write', 'read'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const ON_FAILURE = ['abort', 'warn', 'quiet', 'break', 'retry'] as const;
export type OnFailure = (typeof ON_FAILURE)[number];
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const BUILD_COMMANDS = ['run', 'test', 'compile', 'list'] as const;
export type BuildCommand = (typeof BUILD_COMMANDS)[number];

/** Keys that name the step type when `type` is omitted; `build` wins over `command`. */
export const TYPE_NAMING_KEYS: readonly StepType[] = ['log', 'check', 'build', 'command', 'query'];

export const COMMON_STEP_KEYS: readonly string[] = ['type', 'id', 'name', 'if', 'on_failure', 'goto'];

/** Keys each type accepts besides the common ones; `log` steps may carry the message under `log`. */
export const STEP_KEYS: Readonly<Record<StepType, readonly string[]>> = {
  log: ['message', 'log', 'level'],
  replication: ['path', 'streams', 'mode', 'vars'],
  query: ['connection', 'query'],
  build: [
    'build', 'command', 'test', 'target', 'select', 'exclude', 'vars', 'env', 'schema', 'prod',
    'full_refresh', 'no_seeds', 'range', 'fail_fast', 'threads', 'recursive',
  ],
  http: ['url', 'method', 'headers', 'payload', 'timeout'],
  command: ['command', 'working_dir', 'env', 'timeout'],
  check: ['check', 'failure_message'],
  group: ['steps', 'loop', 'concurrency'],
  set: ['key', 'value', 'map', 'delete'],
  write: ['to', 'content'],
  read: ['from'],
};

/** Step ids: `^[A-Za-z_][A-Za-z0-9_]*$`. */
export const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Seconds; the longest delay a Node timer takes (2^31−1 ms), so any accepted timeout can be armed. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;
export const HTTP_DEFAULT_TIMEOUT = 30;
export const MAX_GROUP_CONCURRENCY = 16;

interface StepBase {
  readonly id?: string;
  readonly name?: string;
  /** An expression, or a YAML boolean. */
  readonly if?: string | boolean;
  readonly on_failure: OnFailure;
  readonly goto?: string;
  /** 1-based position among its siblings (for generated ids `step_<n>`). */
  readonly position: number;
}

export interface LogStep extends StepBase {
  readonly type: 'log';
  readonly message: string;
  readonly level: LogLevel;
}

export interface ReplicationStep extends StepBase {
  readonly type: 'replication';
  readonly path: string;
  readonly streams?: readonly string[];
  readonly mode?: ReplicationMode;
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface QueryStep extends StepBase {
  readonly type: 'query';
  readonly connection: string;
  /** SQL or `file://path`. */
  readonly query: string;
}

export interface BuildStep extends StepBase {
  readonly type: 'build';
  readonly build: string;
  /** `test: true` already folded in. */
  readonly command: BuildCommand;
  readonly target?: string;
  /** Selector items, comma-split. */
  readonly select?: readonly string[];
  readonly exclude?: readonly string[];
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, EnvValue>>;
  readonly schema?: string;
  readonly prod?: boolean;
  readonly full_refresh?: boolean;
  readonly no_seeds?: boolean;
  readonly range?: string;
  readonly fail_fast?: boolean;
  readonly threads?: number;
  readonly recursive?: boolean;
}

export interface HttpStep extends StepBase {
  readonly type: 'http';
  readonly url: string;
  readonly method: HttpMethod;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string, or a mapping sent as JSON. */
  readonly payload?: unknown;
  readonly timeout: number;
}

export interface CommandStep extends StepBase {
  readonly type: 'command';
  /** A string runs through `/bin/sh -c`; a list runs without a shell. */
  readonly command: string | readonly string[];
  readonly working_dir?: string;
  readonly env?: Readonly<Record<string, EnvValue>>;
  readonly timeout?: number;
}

export interface CheckStep extends StepBase {
  readonly type: 'check';
  readonly check: string | boolean;
  readonly failure_message?: string;
}

export interface GroupStep extends StepBase {
  readonly type: 'group';
  readonly steps: readonly PipelineStep[];
  /** A list, or an expression yielding one. */
  readonly loop?: string | readonly unknown[];
  readonly concurrency: number;
}

export interface SetStep extends StepBase {
  readonly type: 'set';
  readonly key?: string;
  readonly value?: unknown;
  readonly map?: Readonly<Record<string, unknown>>;
  readonly delete?: boolean;
}

export interface WriteStep extends StepBase {
  readonly type: 'write';
  /** `CONNECTION/path`. */
  readonly to: string;
  readonly content: unknown;
}

export interface ReadStep extends StepBase {
  readonly type: 'read';
  /** `CONNECTION/path` or `file://path`. */
  readonly from: string;
}

export type PipelineStep =
  | LogStep | ReplicationStep | QueryStep | BuildStep | HttpStep | CommandStep
  | CheckStep | GroupStep | SetStep | WriteStep | ReadStep;

export interface PipelineFile {
  readonly kind: 'pipeline';
  readonly env: Readonly<Record<string, EnvValue>>;
  readonly steps: readonly PipelineStep[];
}

/** The id a step's records use: its own, else `step_<n>`. */
export function stepId(step: PipelineStep): string {
  return step.id ?? `step_${step.position}`;
}
