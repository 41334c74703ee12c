/**
 * What one replication task does, as plain JSON-safe data: it crosses the
 * worker-thread boundary inside a pool task, so it holds resolved
 * connections, absolute file paths and text only. Built by `planReplication`
 * (plan.ts), consumed by `runStream` (run-stream.ts).
 */
import type { Connection } from '../connections/connection.js';
import type { ReplicationMode, SourceOptions, TargetOptions } from '../jobs/replication-model.js';

export type FileFormat = 'csv' | 'json' | 'jsonlines' | 'parquet';

/** One file of a file connection. */
export interface FileEntry {
  /** Absolute path. */
  readonly path: string;
  /** Path under the connection root, POSIX separators. */
  readonly relative: string;
  readonly mtimeMs: number;
  readonly size: number;
}

export type SourceRead =
  | { readonly kind: 'table'; readonly schema: string; readonly table: string }
  | { readonly kind: 'sql'; readonly sql: string }
  | { readonly kind: 'files'; readonly files: readonly FileEntry[]; readonly format: FileFormat };

export type TargetWrite =
  | { readonly kind: 'table'; readonly schema: string; readonly table: string }
  | { readonly kind: 'file'; readonly path: string; readonly relative: string; readonly format: FileFormat };

export interface StreamPlan {
  readonly taskId: string;
  /** Stream key after expansion (a task's `stream_name`). */
  readonly streamName: string;
  /** The key as written in the file (a wildcard for expanded streams). */
  readonly key: string;
  readonly mode: ReplicationMode;
  /** Resolved target object as shown in the task record; null when it could not be resolved. */
  readonly object: string | null;
  readonly source: Connection;
  readonly target: Connection;
  readonly read: SourceRead | null;
  readonly write: TargetWrite | null;
  readonly select: readonly string[];
  readonly where?: string;
  readonly primaryKey: readonly string[];
  readonly updateKey?: string;
  /** backfill: inclusive `[start, end]` of update_key. */
  readonly range?: readonly [string, string];
  readonly sourceOptions: SourceOptions;
  readonly targetOptions: TargetOptions;
  /** Execution start, ISO: `_service_loaded_at` of snapshot rows. */
  readonly loadedAt: string;
  /** Names temp tables: unique per execution and task. */
  readonly runId: string;
  /** File sources in incremental mode without keys: read only files modified after this time (ms). */
  readonly filesModifiedAfter?: number;
  readonly disabled: boolean;
  /** Set when the stream cannot run (unresolved variable, mode requirements): the task fails with it. */
  readonly error?: string;
}

export interface StreamOutcome {
  readonly rows: number;
  readonly bytes: number;
  /** File sources: newest modification time among the files read (ms), the next run's watermark. */
  readonly filesWatermark?: number;
}
