/**
 * The documented failure messages for target work (materialization, drops,
 * incremental merges, seeds), built in one place so the exact wording has one source. A
 * cancelled statement is never wrapped: the node's error must read
 * `cancelled`.
 */
import { EngineError } from '../errors.js';
import { isCancelled } from './sql-driver.js';
import { relationText } from './relation.js';
import type { Relation, RelationKind } from './target.js';

/** Wraps `cause` under `prefix` (code `node`), passing a cancellation through untouched. */
export function wrapFailure(prefix: string, cause: unknown): EngineError {
  if (isCancelled(cause)) return cause as EngineError;
  return EngineError.wrap(prefix, cause, 'node');
}

export function materializeFailed(modelName: string, mode: string, cause: unknown): EngineError {
  return wrapFailure(`could not materialize model '${modelName}' (${mode})`, cause);
}

export function dropBlocked(kind: RelationKind, rel: Relation): EngineError {
  return new EngineError('node', `could not drop ${kind} ${relationText(rel)} (dependent objects may exist; set drop_cascade: true to force)`);
}

export function renameFailed(rel: Relation, tmp: Relation, cause: unknown): EngineError {
  return wrapFailure(`could not rename temp table to '${relationText(rel)}' (temp left at ${relationText(tmp)})`, cause);
}

export function missingColumns(modelName: string, columns: readonly string[], rel: Relation): EngineError {
  return new EngineError('node', `model '${modelName}': column(s) ${columns.join(', ')} not found in ${relationText(rel)}; run with --full-refresh to rebuild`);
}

export function stageFailed(modelName: string, cause: unknown): EngineError {
  return wrapFailure(`could not create temp table for incremental merge on '${modelName}'`, cause);
}

export function mergeSqlFailed(modelName: string, cause: unknown): EngineError {
  return wrapFailure(`could not generate merge SQL for '${modelName}'`, cause);
}

export function mergeFailed(modelName: string, cause: unknown): EngineError {
  return wrapFailure(`could not execute incremental merge for '${modelName}'`, cause);
}

export function seedLoadFailed(seedName: string, rel: Relation, cause: unknown): EngineError {
  return wrapFailure(`could not load seed '${seedName}' into ${relationText(rel)}`, cause);
}

export function seedReadFailed(seedName: string, cause: unknown): EngineError {
  return wrapFailure(`could not read seed '${seedName}'`, cause);
}

/** `could not connect to '<t>': <cause>`; `cause` must already be redacted. */
export function connectFailed(targetName: string, cause: string): EngineError {
  return new EngineError('connection', `could not connect to '${targetName}'`, new EngineError('connection', cause));
}
