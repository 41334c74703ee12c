/**
 * From a validated replication file and its expanded streams to one
 * `StreamPlan` per task: `defaults` merged into each
 * stream, the mode override of the job or run applied, `${NAME}` resolved
 * `file://` SQL read, the object template rendered, and the checks
 * that depend on the connections' kinds. A stream that cannot run keeps its
 * task and carries the reason in `error`, so only that task fails.
 */
import { replicationRunId } from '../targets/temp-sweep.js';
import type { Connection } from '../connections/connection.js';
import { EngineError } from '../errors.js';
import { fileRefPath } from '../jobs/file-ref.js';
import {
  FILE_TARGET_MODES, REPLICATION_MODES, effectiveSettings, type EffectiveStreamSettings, type ReplicationFile, type ReplicationMode,
  type SourceOptions, type TargetOptions,
} from '../jobs/replication-model.js';
import type { ExpandedStream } from './expand.js';
import { extensionOf, fileRoot, formatFromName, underRoot } from './file-catalog.js';
import { renderObject, templateVariables, type TemplateStream } from './object-template.js';
import type { FileFormat, SourceRead, StreamPlan, TargetWrite } from './plan-types.js';

export interface PlanOptions {
  readonly file: ReplicationFile;
  readonly source: Connection;
  readonly target: Connection;
  /** Expanded and selected streams, in task order. */
  readonly streams: readonly ExpandedStream[];
  /** `config.mode` of the job, replaced by the run's `mode`. */
  readonly modeOverride?: string | null;
  /** Lookup in order: run vars, job vars, the file's `env:`, env files, process environment. */
  readonly lookup: (name: string) => string | undefined;
  /** Execution start. */
  readonly start: Date;
  readonly execId: string;
  /** Content of a project file (`sql: file://…`, `pre_sql`/`post_sql`); throws when it cannot be read. */
  readonly readProjectFile: (path: string) => string;
  /** File sources in incremental mode without keys: the stream's last successful watermark (ms). */
  readonly fileWatermark?: (streamName: string) => number | undefined;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** An unresolved name is `variable NAME is not set`. */
export function substitute(text: string, lookup: (name: string) => string | undefined): string {
  return text.replace(VAR, (_, name: string) => {
    const v = lookup(name);
    if (v === undefined) throw new EngineError('node', `variable ${name} is not set`);
    return v;
  });
}

/** Lookup for a file's `env:` map placed after run and job vars: its values resolve against the layers below it. */
export function fileEnvLookup(
  env: Readonly<Record<string, string | number | boolean>>,
  vars: (name: string) => string | undefined,
  below: (name: string) => string | undefined,
): (name: string) => string | undefined {
  return (name) => {
    const v = vars(name);
    if (v !== undefined) return v;
    if (Object.hasOwn(env, name)) return substitute(String(env[name]), below);
    return below(name);
  };
}

function defaultSchemaOf(c: Connection): string {
  return c.type === 'postgres' || c.type === 'duckdb' ? c.schema : '';
}

function supported(c: Connection, role: 'source' | 'target'): void {
  if (c.type === 'postgres' || c.type === 'duckdb' || c.type === 'file') return;
  const declared = c.type === 'invalid' ? `an invalid definition (${c.problem})` : `type ${c.declaredType}`;
  throw new EngineError('node', `${role} connection ${c.name} has ${declared}; replication supports postgres, duckdb and file connections`);
}

function modeChecks(mode: ReplicationMode, eff: EffectiveStreamSettings, source: Connection, target: Connection): string | undefined {
  const hasPk = (eff.primary_key?.length ?? 0) > 0;
  if (mode === 'incremental' && source.type !== 'file' && !hasPk && eff.update_key === undefined) {
    return 'mode incremental requires primary_key and/or update_key';
  }
  if (mode === 'backfill' && !(hasPk && eff.update_key !== undefined && eff.source_options?.range !== undefined)) {
    return 'mode backfill requires primary_key, update_key and source_options.range';
  }
  if (target.type === 'file' && !FILE_TARGET_MODES.includes(mode)) return `mode ${mode} is not supported for file targets`;
  return undefined;
}

function templateStream(s: ExpandedStream): TemplateStream {
  if (s.source.kind === 'table') return { name: s.name, schema: s.source.schema, table: s.source.table };
  if (s.source.kind === 'sql') return { name: s.name, schema: '', table: s.name };
  const path = s.source.filePath;
  const base = path.split('/').pop() ?? path;
  const dot = base.lastIndexOf('.');
  return { name: s.name, schema: '', table: dot > 0 ? base.slice(0, dot) : base, filePath: path };
}

function splitObject(object: string, defaultSchema: string): { schema: string; table: string } {
  const parts = object.split('.');
  if (parts.length === 1 && parts[0] !== '') return { schema: defaultSchema, table: parts[0]! };
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') return { schema: parts[0]!, table: parts[1]! };
  throw new EngineError('node', `object "${object}" must be schema.table or table`);
}

function sourceFormat(files: readonly { relative: string }[], options: SourceOptions | undefined, key: string): FileFormat {
  if (options?.format !== undefined) return options.format;
  for (const f of files) {
    const fmt = formatFromName(f.relative);
    if (fmt !== undefined) return fmt;
  }
  throw new EngineError('node', `cannot tell the file format of stream "${key}" from its extension; set source_options.format`);
}

function substituteOptions<T extends object>(options: T | undefined, lookup: (name: string) => string | undefined): T {
  if (options === undefined) return {} as T;
  return Object.fromEntries(Object.entries(options).map(([k, v]) => [k, typeof v === 'string' ? substitute(v, lookup) : v])) as T;
}

function sqlText(value: string, o: PlanOptions, lookup: (name: string) => string | undefined): string {
  const path = fileRefPath(value);
  return substitute(path === undefined ? value : o.readProjectFile(path), lookup);
}

function planOne(s: ExpandedStream, index: number, o: PlanOptions): StreamPlan {
  const eff = effectiveSettings(o.file.defaults, s.settings);
  const forced = o.modeOverride ?? null;
  const mode = (forced ?? eff.mode) as ReplicationMode;
  const taskId = `task_${index + 1}`;
  const base = {
    taskId,
    streamName: s.name,
    key: s.key,
    mode,
    source: o.source,
    target: o.target,
    select: [] as string[],
    primaryKey: [] as string[],
    sourceOptions: {} as SourceOptions,
    targetOptions: {} as TargetOptions,
    loadedAt: o.start.toISOString(),
    runId: replicationRunId(o.execId, index),
    disabled: eff.disabled === true,
  };
  let object: string | null = null;
  try {
    if (forced !== null && !(REPLICATION_MODES as readonly string[]).includes(forced)) {
      throw new EngineError('node', `unknown mode "${forced}"; expected one of ${REPLICATION_MODES.join(', ')}`);
    }
    if (eff.object === undefined) throw new EngineError('node', '"object" is required (set it on the stream or in defaults)');
    const lookup = o.lookup;
    const vars = templateVariables(templateStream(s), {
      sourceName: o.source.name,
      targetName: o.target.name,
      targetSchema: defaultSchemaOf(o.target),
      start: o.start,
    });
    object = renderObject(substitute(eff.object, lookup), vars);
    const problem = modeChecks(mode, eff, o.source, o.target);
    if (problem !== undefined) throw new EngineError('node', problem);

    let read: SourceRead;
    if (s.source.kind === 'table') read = { kind: 'table', schema: s.source.schema, table: s.source.table };
    else if (s.source.kind === 'sql') {
      if (o.source.type === 'file') throw new EngineError('node', 'a wildcard or file stream cannot have "sql"');
      read = { kind: 'sql', sql: sqlText(eff.sql!, o, lookup) };
    } else {
      if (s.source.files.length === 0 && !s.key.endsWith('/')) throw new EngineError('node', `file "${s.key}" does not exist in connection ${o.source.name}`);
      read = { kind: 'files', files: s.source.files, format: sourceFormat(s.source.files, eff.source_options, s.key) };
    }

    let write: TargetWrite;
    if (o.target.type === 'file') {
      const root = fileRoot(o.target);
      const format = eff.target_options?.format ?? formatFromName(object) ?? 'csv';
      const relative = formatFromName(object) === undefined && eff.target_options?.format === undefined ? `${object}.${extensionOf(format)}` : object;
      write = { kind: 'file', path: underRoot(root, relative), relative, format };
    } else {
      const { schema, table } = splitObject(object, defaultSchemaOf(o.target));
      write = { kind: 'table', schema, table };
      object = `${schema}.${table}`;
    }

    const sourceOptions = substituteOptions(eff.source_options, lookup);
    const targetOptions = substituteOptions(eff.target_options, lookup);
    for (const k of ['pre_sql', 'post_sql'] as const) {
      const v = targetOptions[k];
      if (v !== undefined) (targetOptions as Record<string, unknown>)[k] = sqlText(v, o, lookup);
    }
    let range: [string, string] | undefined;
    if (mode === 'backfill' && sourceOptions.range !== undefined) {
      const [a, b] = sourceOptions.range.split(',').map((p) => p.trim());
      range = [a!, b!];
    }
    const watermark = mode === 'incremental' && o.source.type === 'file' && (eff.primary_key?.length ?? 0) === 0 && eff.update_key === undefined
      ? o.fileWatermark?.(s.name)
      : undefined;
    return {
      ...base,
      object,
      read,
      write,
      select: (eff.select ?? []).map((c) => substitute(c, lookup)),
      ...(eff.where !== undefined ? { where: substitute(eff.where, lookup) } : {}),
      primaryKey: (eff.primary_key ?? []).map((c) => substitute(c, lookup)),
      ...(eff.update_key !== undefined ? { updateKey: substitute(eff.update_key, lookup) } : {}),
      ...(range !== undefined ? { range } : {}),
      sourceOptions,
      targetOptions,
      ...(watermark !== undefined ? { filesModifiedAfter: watermark } : {}),
    };
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    return { ...base, object, read: null, write: null, error: err.message };
  }
}

/** One plan per stream, `task_1` … in order. Fails only for connections replication cannot use. */
export function planReplication(o: PlanOptions): StreamPlan[] {
  supported(o.source, 'source');
  supported(o.target, 'target');
  return o.streams.map((s, i) => planOne(s, i, o));
}
