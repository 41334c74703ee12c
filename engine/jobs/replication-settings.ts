/**
 * Reads one mapping of replication stream settings — a stream's value or
 * `defaults` — with the per-key checks: types, mode and option
 * enums, option keys (target options narrowed by the target connection's kind
 * when it is known), object template variables, select forms, the range
 * shape and `file://` SQL files. Cross-key checks that need `defaults` and
 * the stream together live in replication-validate.ts.
 */
import type { ConnectionKind } from '../connections/connection.js';
import {
  isNull, knownEntries, quote, readBool, readEnum, readInt, readMap, readString, readStringList, readStringOrList, type Scope,
} from './fields.js';
import { checkProjectFile, fileRefPath } from './file-ref.js';
import type { PathSeg } from './problem.js';
import {
  COLUMN_CASINGS, COMPRESSIONS, FILE_FORMATS, MERGE_STRATEGIES, OBJECT_TEMPLATE_VARIABLES, REPLICATION_MODES,
  type ReplicationMode, type SourceOptions, type StreamSettings, type TargetOptions,
} from './replication-model.js';
import type { YEntry, YMap } from './yaml-tree.js';
import { DATABASE_TARGET_KEYS, FILE_TARGET_KEYS, SourceOptionsShape, StreamSettingsShape } from './job-file-shapes.js';
import { keysOf } from '../schemas/shape.js';

const SETTING_KEYS = keysOf(StreamSettingsShape);
const SOURCE_OPTION_KEYS = keysOf(SourceOptionsShape);

/** Settings plus the entries they came from, for positions of later cross-key problems. */
export interface ReadSettings {
  readonly settings: StreamSettings;
  readonly entries: ReadonlyMap<string, YEntry>;
  /** `source_options.range` was written (valid or not). */
  readonly rangeGiven: boolean;
}

type Mutable<T> = { -readonly [K in keyof T]?: T[K] };

function set<T, K extends keyof T>(obj: Mutable<T>, key: K, value: T[K] | undefined): void {
  if (value !== undefined) obj[key] = value;
}

function readMode(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): ReplicationMode | undefined {
  const m = readString(s, e, path);
  if (m === undefined || e === undefined) return undefined;
  if ((REPLICATION_MODES as readonly string[]).includes(m)) return m as ReplicationMode;
  s.problems.add([...path, e.key], `unknown mode ${quote(m)}; expected one of ${REPLICATION_MODES.join(', ')}`, e.value.offset);
  return undefined;
}

function readChar(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string | undefined {
  const v = readString(s, e, path);
  if (v === undefined || e === undefined || [...v].length === 1) return v;
  s.problems.add([...path, e.key], `${quote(e.key)} must be a single character`, e.value.offset);
  return undefined;
}

function readPositive(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): number | undefined {
  const n = readInt(s, e, path);
  if (n === undefined || e === undefined || n >= 1) return n;
  s.problems.add([...path, e.key], `${quote(e.key)} must be a positive integer`, e.value.offset);
  return undefined;
}

/** `start,end` with both parts present. */
export function isRange(text: string): boolean {
  const parts = text.split(',');
  return parts.length === 2 && parts.every((p) => p.trim() !== '');
}

function readSourceOptions(s: Scope, map: YMap, path: readonly PathSeg[]): SourceOptions {
  const e = knownEntries(s, map, path, SOURCE_OPTION_KEYS, (k) => `unknown source option ${quote(k)}`);
  const o: Mutable<SourceOptions> = {};
  set(o, 'format', readEnum(s, e.get('format'), path, FILE_FORMATS));
  set(o, 'header', readBool(s, e.get('header'), path));
  set(o, 'delimiter', readChar(s, e.get('delimiter'), path));
  set(o, 'quote', readChar(s, e.get('quote'), path));
  set(o, 'escape', readChar(s, e.get('escape'), path));
  set(o, 'compression', readEnum(s, e.get('compression'), path, COMPRESSIONS));
  set(o, 'null_if', readString(s, e.get('null_if'), path));
  set(o, 'empty_as_null', readBool(s, e.get('empty_as_null'), path));
  set(o, 'datetime_format', readString(s, e.get('datetime_format'), path));
  set(o, 'flatten', readBool(s, e.get('flatten'), path));
  const rangeEntry = e.get('range');
  const range = readString(s, rangeEntry, path);
  if (range !== undefined && rangeEntry !== undefined && !isRange(range)) {
    s.problems.add([...path, 'range'], 'source_options.range must be "start,end"', rangeEntry.value.offset);
  } else set(o, 'range', range);
  set(o, 'limit', readPositive(s, e.get('limit'), path));
  return o;
}

function targetOptionKeys(kind: ConnectionKind | undefined): Set<string> {
  if (kind === 'database') return new Set(DATABASE_TARGET_KEYS);
  if (kind === 'file') return new Set(FILE_TARGET_KEYS);
  return new Set([...DATABASE_TARGET_KEYS, ...FILE_TARGET_KEYS]);
}

function readSqlText(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string | undefined {
  const v = readString(s, e, path);
  const file = v === undefined ? undefined : fileRefPath(v);
  if (file !== undefined && e !== undefined) checkProjectFile(s, file, [...path, e.key], e.value.offset);
  return v;
}

function readTargetOptions(s: Scope, map: YMap, path: readonly PathSeg[], targetKind: ConnectionKind | undefined): TargetOptions {
  const e = knownEntries(s, map, path, targetOptionKeys(targetKind), (k) => `unknown target option ${quote(k)}`);
  const o: Mutable<TargetOptions> = {};
  set(o, 'column_casing', readEnum(s, e.get('column_casing'), path, COLUMN_CASINGS));
  set(o, 'add_new_columns', readBool(s, e.get('add_new_columns'), path));
  set(o, 'adjust_column_type', readBool(s, e.get('adjust_column_type'), path));
  set(o, 'merge_strategy', readEnum(s, e.get('merge_strategy'), path, MERGE_STRATEGIES));
  set(o, 'pre_sql', readSqlText(s, e.get('pre_sql'), path));
  set(o, 'post_sql', readSqlText(s, e.get('post_sql'), path));
  set(o, 'batch_limit', readPositive(s, e.get('batch_limit'), path));
  set(o, 'format', readEnum(s, e.get('format'), path, FILE_FORMATS));
  set(o, 'header', readBool(s, e.get('header'), path));
  set(o, 'delimiter', readChar(s, e.get('delimiter'), path));
  set(o, 'compression', readEnum(s, e.get('compression'), path, COMPRESSIONS));
  set(o, 'file_max_rows', readPositive(s, e.get('file_max_rows'), path));
  return o;
}

/** `{name}` placeholders of an object template; `${NAME}` substitutions are not placeholders. */
export function objectTemplateVariables(object: string): string[] {
  return [...object.matchAll(/(?<!\$)\{([^{}]*)\}/g)].map((m) => m[1]!);
}

function readObject(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string | undefined {
  const v = readString(s, e, path);
  if (v === undefined || e === undefined) return v;
  for (const name of objectTemplateVariables(v)) {
    if (!OBJECT_TEMPLATE_VARIABLES.has(name)) s.problems.add([...path, 'object'], `unknown variable {${name}} in object`, e.value.offset);
  }
  return v;
}

function readSelect(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string[] | undefined {
  const cols = readStringList(s, e, path);
  if (cols === undefined || e === undefined) return cols;
  const excluded = cols.filter((c) => c.startsWith('-')).length;
  if (excluded > 0 && excluded < cols.length) {
    s.problems.add([...path, 'select'], 'select cannot mix included and excluded columns', e.value.offset);
  }
  return cols;
}

/** True when `key` was written with a non-null value (even one that failed its checks). */
export function given(entries: ReadonlyMap<string, YEntry>, key: string): boolean {
  const e = entries.get(key);
  return e !== undefined && !isNull(e.value);
}

/** Reads stream settings from `map` at `path` (a stream or `defaults`). */
export function readStreamSettings(s: Scope, map: YMap, path: readonly PathSeg[], targetKind: ConnectionKind | undefined): ReadSettings {
  const e = knownEntries(s, map, path, SETTING_KEYS);
  const o: Mutable<StreamSettings> = {};
  set(o, 'mode', readMode(s, e.get('mode'), path));
  set(o, 'object', readObject(s, e.get('object'), path));
  set(o, 'primary_key', readStringOrList(s, e.get('primary_key'), path));
  set(o, 'update_key', readString(s, e.get('update_key'), path));
  set(o, 'select', readSelect(s, e.get('select'), path));
  set(o, 'where', readString(s, e.get('where'), path));
  set(o, 'sql', readSqlText(s, e.get('sql'), path));
  const where = e.get('where');
  if (where !== undefined && given(e, 'sql') && given(e, 'where')) {
    s.problems.add([...path, 'where'], '"where" cannot be combined with "sql"', where.keyOffset);
  }
  const so = readMap(s, e.get('source_options'), path);
  if (so !== undefined) o.source_options = readSourceOptions(s, so, [...path, 'source_options']);
  const rangeGiven = so !== undefined && so.entries.some((x) => x.key === 'range' && !isNull(x.value));
  const to = readMap(s, e.get('target_options'), path);
  if (to !== undefined) o.target_options = readTargetOptions(s, to, [...path, 'target_options'], targetKind);
  set(o, 'disabled', readBool(s, e.get('disabled'), path));
  set(o, 'description', readString(s, e.get('description'), path));
  return { settings: o, entries: e, rangeGiven };
}
