/**
 * The validated form of a replication file and the rules the
 * runner and the job API share: how a stream's settings combine with
 * `defaults`, which mode applies when none is set, and which names a stream
 * key (explicit or wildcard) stands for (a job's `streams` entries).
 */
import type { EnvValue } from './fields.js';

export const REPLICATION_MODES = ['full-refresh', 'incremental', 'truncate', 'snapshot', 'backfill'] as const;
export type ReplicationMode = (typeof REPLICATION_MODES)[number];

/** Modes a file target supports. */
export const FILE_TARGET_MODES: readonly ReplicationMode[] = ['full-refresh', 'truncate'];

export const FILE_FORMATS = ['csv', 'json', 'jsonlines', 'parquet'] as const;
export const COMPRESSIONS = ['auto', 'none', 'gzip'] as const;
export const COLUMN_CASINGS = ['source', 'lower', 'upper', 'snake'] as const;
export const MERGE_STRATEGIES = ['update_insert', 'delete_insert', 'insert', 'update'] as const;

export interface SourceOptions {
  readonly format?: (typeof FILE_FORMATS)[number];
  readonly header?: boolean;
  readonly delimiter?: string;
  readonly quote?: string;
  readonly escape?: string;
  readonly compression?: (typeof COMPRESSIONS)[number];
  readonly null_if?: string;
  readonly empty_as_null?: boolean;
  readonly datetime_format?: string;
  readonly flatten?: boolean;
  /** `"start,end"` (backfill). */
  readonly range?: string;
  readonly limit?: number;
}

export interface TargetOptions {
  readonly column_casing?: (typeof COLUMN_CASINGS)[number];
  readonly add_new_columns?: boolean;
  readonly adjust_column_type?: boolean;
  readonly merge_strategy?: (typeof MERGE_STRATEGIES)[number];
  readonly pre_sql?: string;
  readonly post_sql?: string;
  readonly batch_limit?: number;
  readonly format?: (typeof FILE_FORMATS)[number];
  readonly header?: boolean;
  readonly delimiter?: string;
  readonly compression?: (typeof COMPRESSIONS)[number];
  readonly file_max_rows?: number;
}

/** Settings as written in one stream or in `defaults`; absent keys are not set. */
export interface StreamSettings {
  readonly mode?: ReplicationMode;
  readonly object?: string;
  readonly primary_key?: readonly string[];
  readonly update_key?: string;
  readonly select?: readonly string[];
  readonly where?: string;
  /** Inline SQL or `file://path.sql`, as written. */
  readonly sql?: string;
  readonly source_options?: SourceOptions;
  readonly target_options?: TargetOptions;
  readonly disabled?: boolean;
  readonly description?: string;
}

/** A stream's settings after `defaults` were applied; `mode` is always decided. */
export interface EffectiveStreamSettings extends StreamSettings {
  readonly mode: ReplicationMode;
}

export interface ReplicationStream {
  /** As written: `public.users`, `public.*`, `exports/`, `data/*.csv`, `daily_revenue`. */
  readonly key: string;
  readonly settings: StreamSettings;
}

export interface ReplicationFile {
  readonly kind: 'replication';
  readonly source: string;
  readonly target: string;
  readonly defaults: StreamSettings;
  /** In file order. */
  readonly streams: readonly ReplicationStream[];
  readonly env: Readonly<Record<string, EnvValue>>;
}

/** `{name}` variables of `object` templates. */
export const OBJECT_TEMPLATE_VARIABLES: ReadonlySet<string> = new Set([
  'stream_schema', 'stream_table',
  'stream_schema_lower', 'stream_schema_upper', 'stream_table_lower', 'stream_table_upper',
  'stream_name',
  'stream_file_path', 'stream_file_name', 'stream_file_folder', 'stream_file_ext',
  'source_name', 'target_name', 'target_schema', 'run_timestamp',
  'YYYY', 'MM', 'DD', 'HH',
]);

/** `defaults` under a stream: stream values replace default ones, option maps merge key by key. */
export function effectiveSettings(defaults: StreamSettings, stream: StreamSettings): EffectiveStreamSettings {
  const merged: StreamSettings = { ...defaults, ...stream };
  const source_options = defaults.source_options || stream.source_options ? { ...defaults.source_options, ...stream.source_options } : undefined;
  const target_options = defaults.target_options || stream.target_options ? { ...defaults.target_options, ...stream.target_options } : undefined;
  const mode = merged.mode ?? (merged.primary_key !== undefined || merged.update_key !== undefined ? 'incremental' : 'full-refresh');
  return {
    ...merged,
    mode,
    ...(source_options ? { source_options } : {}),
    ...(target_options ? { target_options } : {}),
  };
}

/** A key expanded at run time: a database wildcard (`public.*`) or a file glob (`*`, `?`). */
export function isWildcardKey(key: string): boolean {
  return key.includes('*') || key.includes('?');
}

/** A file stream reading a whole folder into one object. */
export function isFolderKey(key: string): boolean {
  return key.endsWith('/');
}

function globRegExp(pattern: string): RegExp {
  let re = '';
  for (const ch of pattern) {
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** True when `name` is what the wildcard `pattern` stands for (`*` and `?` stop at `/`). */
export function wildcardMatches(pattern: string, name: string): boolean {
  return globRegExp(pattern).test(name);
}

export function streamKeys(file: ReplicationFile): string[] {
  return file.streams.map((s) => s.key);
}

/**
 * A job's `streams` entry must equal a stream key of the file or be
 * matched by one of its wildcard keys.
 */
export function streamMatches(file: ReplicationFile, stream: string): boolean {
  return file.streams.some((s) => s.key === stream || (isWildcardKey(s.key) && wildcardMatches(s.key, stream)));
}
