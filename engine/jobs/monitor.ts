/**
 * Monitor files: the validated model, the rule that picks the
 * settings for one table (entries apply in order, a later matching entry
 * replaces earlier ones, over `defaults`), and validation with the monitor
 * messages. `schemata.exclude` (Sling's key of the same name) lists glob
 * patterns over `schema.table` for tables that come and go (`*.*_tmp`):
 * wildcards never resolve them and they raise no schema-change events.
 */
import {
  connectionKindOf, isNull, knownEntries, quote, readBool, readConnectionName, readEnvMap, readMap, readString,
  readStringList, requireEntry, type EnvValue, type Scope,
} from './fields.js';
import { parseJobDuration } from './job-duration.js';
import { MonitorSettingsShape, MonitorShape } from './job-file-shapes.js';
import { keysOf } from '../schemas/shape.js';
import type { PathSeg } from './problem.js';
import { isWildcardKey, wildcardMatches } from './replication-model.js';
import type { YEntry, YMap, YNode } from './yaml-tree.js';

import { MONITOR_METRICS, type MonitorMetric } from './monitor-metrics.js';
export { MONITOR_METRICS, type MonitorMetric };

export interface MonitorSettings {
  readonly row_count?: boolean;
  readonly freshness_column?: string;
  /** As written (`6h`); `freshness_threshold_seconds` is its value. */
  readonly freshness_threshold?: string;
  readonly freshness_threshold_seconds?: number;
  /** Column name or `"*"` → metrics. */
  readonly columns?: Readonly<Record<string, readonly MonitorMetric[]>>;
  readonly disabled?: boolean;
}

export interface MonitorObject {
  /** `schema.table`, `schema.*` or `schema.prefix_*`. */
  readonly key: string;
  readonly settings: MonitorSettings;
}

export interface MonitorFile {
  readonly kind: 'monitor';
  readonly connection: string;
  readonly defaults: MonitorSettings;
  readonly objects: readonly MonitorObject[];
  readonly schemata: MonitorSchemata;
  readonly env: Readonly<Record<string, EnvValue>>;
}

export interface MonitorSchemata {
  /** Glob patterns (`*`, `?`) over `schema.table`; empty when not given. */
  readonly exclude: readonly string[];
}

/** `schema.table`, or a wildcard `schema.*` / `schema.prefix_*`. */
const OBJECT_NAME = /^[A-Za-z0-9_$]+\.(?:[A-Za-z0-9_$]+|[A-Za-z0-9_$]*\*)$/;
/** A `schemata.exclude` pattern: `schema.table` where either part may hold `*` and `?`. */
const EXCLUDE_PATTERN = /^[A-Za-z0-9_$*?]+\.[A-Za-z0-9_$*?]+$/;
const TOP_KEYS = keysOf(MonitorShape);
const SCHEMATA_KEYS = keysOf(MonitorShape.schema.schemata);
const SETTING_KEYS = keysOf(MonitorSettingsShape);

/** Settings for `table` (`schema.table`): the last matching entry over `defaults`; undefined when none matches. */
export function monitorSettingsFor(file: MonitorFile, table: string): MonitorSettings | undefined {
  let hit: MonitorObject | undefined;
  for (const o of file.objects) {
    if (o.key === table || (isWildcardKey(o.key) && wildcardMatches(o.key, table))) hit = o;
  }
  return hit === undefined ? undefined : { row_count: true, ...file.defaults, ...hit.settings };
}

function scalarText(node: YNode): string {
  return node.kind === 'scalar' ? String(node.value) : '';
}

function readMetrics(s: Scope, col: YEntry, path: readonly PathSeg[]): MonitorMetric[] | undefined {
  if (col.value.kind !== 'seq') {
    s.problems.add([...path, col.key], `${quote(col.key)} must be a list`, col.value.offset);
    return undefined;
  }
  const out: MonitorMetric[] = [];
  col.value.items.forEach((item, i) => {
    const m = item.kind === 'scalar' ? item.value : undefined;
    if (typeof m === 'string' && (MONITOR_METRICS as readonly string[]).includes(m)) out.push(m as MonitorMetric);
    else {
      const shown = item.kind === 'scalar' ? String(m) : '';
      s.problems.add([...path, col.key, i], `unknown metric ${quote(shown)}; expected one of ${MONITOR_METRICS.join(', ')}`, item.offset);
    }
  });
  return out;
}

interface ReadSettings {
  readonly settings: MonitorSettings;
  readonly entries: ReadonlyMap<string, YEntry>;
}

function readSettings(s: Scope, map: YMap, path: readonly PathSeg[]): ReadSettings {
  const e = knownEntries(s, map, path, SETTING_KEYS);
  const o: { -readonly [K in keyof MonitorSettings]?: MonitorSettings[K] } = {};
  const rowCount = readBool(s, e.get('row_count'), path);
  if (rowCount !== undefined) o.row_count = rowCount;
  const column = readString(s, e.get('freshness_column'), path);
  if (column !== undefined) o.freshness_column = column;
  const th = e.get('freshness_threshold');
  if (th !== undefined && !isNull(th.value)) {
    const text = scalarText(th.value);
    const seconds = th.value.kind === 'scalar' && typeof th.value.value === 'string' ? parseJobDuration(text) : undefined;
    if (seconds === undefined) s.problems.add([...path, th.key], `invalid duration ${quote(text)}`, th.value.offset);
    else {
      o.freshness_threshold = text;
      o.freshness_threshold_seconds = seconds;
    }
  }
  const columns = readMap(s, e.get('columns'), path);
  if (columns !== undefined) {
    const out: Record<string, readonly MonitorMetric[]> = {};
    for (const col of columns.entries) {
      const metrics = readMetrics(s, col, [...path, 'columns']);
      if (metrics !== undefined) Object.defineProperty(out, col.key, { value: metrics, enumerable: true, writable: true, configurable: true });
    }
    o.columns = out;
  }
  const disabled = readBool(s, e.get('disabled'), path);
  if (disabled !== undefined) o.disabled = disabled;
  return { settings: o, entries: e };
}

function given(r: ReadSettings, key: string): YEntry | undefined {
  const e = r.entries.get(key);
  return e !== undefined && !isNull(e.value) ? e : undefined;
}

function readObjects(s: Scope, root: YMap, entries: ReadonlyMap<string, YEntry>, defaults: ReadSettings): MonitorObject[] {
  const e = requireEntry(s, root, entries, 'objects');
  if (e === undefined) return [];
  const v = e.value;
  if (v.kind === 'seq' || (v.kind === 'scalar' && v.value !== null)) {
    s.problems.add(['objects'], '"objects" must be a mapping', v.offset);
    return [];
  }
  if (v.kind === 'scalar' || v.entries.length === 0) {
    s.problems.add(['objects'], '"objects" must contain at least one object', v.offset);
    return [];
  }
  const objects: MonitorObject[] = [];
  for (const obj of v.entries) {
    const path = ['objects', obj.key];
    if (!OBJECT_NAME.test(obj.key)) s.problems.add(path, `invalid object name ${quote(obj.key)}`, obj.keyOffset);
    let own: ReadSettings = { settings: {}, entries: new Map() };
    if (obj.value.kind === 'map') own = readSettings(s, obj.value, path);
    else if (!isNull(obj.value)) {
      s.problems.add(path, `${quote(obj.key)} must be a mapping`, obj.value.offset);
      continue;
    }
    const threshold = given(own, 'freshness_threshold') ?? given(defaults, 'freshness_threshold');
    if (threshold !== undefined && given(own, 'freshness_column') === undefined && given(defaults, 'freshness_column') === undefined) {
      const ownTh = given(own, 'freshness_threshold');
      if (ownTh !== undefined) s.problems.add([...path, 'freshness_threshold'], 'freshness_threshold requires freshness_column', ownTh.value.offset);
      else s.problems.add(path, 'freshness_threshold requires freshness_column', obj.keyOffset);
    }
    objects.push({ key: obj.key, settings: own.settings });
  }
  return objects;
}

function readSchemata(s: Scope, e: YEntry | undefined): MonitorSchemata {
  const map = readMap(s, e, []);
  if (map === undefined) return { exclude: [] };
  const entries = knownEntries(s, map, ['schemata'], SCHEMATA_KEYS);
  const ex = entries.get('exclude');
  const patterns = readStringList(s, ex, ['schemata']) ?? [];
  if (ex !== undefined && ex.value.kind === 'seq') {
    ex.value.items.forEach((item, i) => {
      const p = patterns[i];
      if (p !== undefined && !EXCLUDE_PATTERN.test(p)) s.problems.add(['schemata', 'exclude', i], `invalid exclude pattern ${quote(p)}`, item.offset);
    });
  }
  return { exclude: patterns.filter((p) => EXCLUDE_PATTERN.test(p)) };
}

export function validateMonitor(s: Scope, root: YMap): MonitorFile {
  const entries = knownEntries(s, root, [], TOP_KEYS);
  const connection = readConnectionName(s, root, entries, 'connection');
  const kind = connectionKindOf(s, connection);
  if (connection !== undefined && kind !== undefined && kind !== 'database') {
    s.problems.add(['connection'], `monitor connection ${connection} must be a database connection`, entries.get('connection')!.value.offset);
  }
  const defaultsMap = readMap(s, entries.get('defaults'), []);
  const defaults = defaultsMap === undefined ? { settings: {}, entries: new Map<string, YEntry>() } : readSettings(s, defaultsMap, ['defaults']);
  const objects = readObjects(s, root, entries, defaults);
  const schemata = readSchemata(s, entries.get('schemata'));
  const env = readEnvMap(s, entries.get('env'), []) ?? {};
  return { kind: 'monitor', connection: connection ?? '', defaults: defaults.settings, objects, schemata, env };
}
