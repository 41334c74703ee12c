/**
 * Replication file validation: the
 * top-level keys, each stream's settings, and the checks that need a stream
 * and `defaults` together (object required, mode requirements, sql on
 * wildcard or file streams). Checks that depend on a connection's kind run
 * only when the injected context knows the connection.
 */
import type { ConnectionKind } from '../connections/connection.js';
import { connectionKindOf, knownEntries, quote, readConnectionName, readEnvMap, readMap, requireEntry, type Scope } from './fields.js';
import type { PathSeg } from './problem.js';
import {
  FILE_TARGET_MODES, effectiveSettings, isFolderKey, isWildcardKey, type ReplicationFile, type ReplicationStream,
} from './replication-model.js';
import { given, readStreamSettings, type ReadSettings } from './replication-settings.js';
import type { YEntry, YMap } from './yaml-tree.js';
import { ReplicationShape } from './job-file-shapes.js';
import { keysOf } from '../schemas/shape.js';

const TOP_KEYS = keysOf(ReplicationShape);
const NO_SETTINGS: ReadSettings = { settings: {}, entries: new Map(), rangeGiven: false };

interface Kinds {
  readonly source: ConnectionKind | undefined;
  readonly target: ConnectionKind | undefined;
}

/** Where a problem about a stream's effective key lands: the stream's own entry, else the stream key. */
function spot(stream: YEntry, own: ReadSettings, key: string): { path: PathSeg[]; offset: number } {
  const e = own.entries.get(key);
  return e !== undefined && given(own.entries, key)
    ? { path: ['streams', stream.key, key], offset: e.value.offset }
    : { path: ['streams', stream.key], offset: stream.keyOffset };
}

/** False when the mode that applies was written but rejected, so mode rules would only echo that problem. */
function modeDecided(own: ReadSettings, defaults: ReadSettings): boolean {
  if (given(own.entries, 'mode')) return own.settings.mode !== undefined;
  if (given(defaults.entries, 'mode')) return defaults.settings.mode !== undefined;
  return true;
}

function crossCheck(s: Scope, stream: YEntry, own: ReadSettings, defaults: ReadSettings, kinds: Kinds): void {
  const eff = effectiveSettings(defaults.settings, own.settings);
  const has = (key: string): boolean => given(own.entries, key) || given(defaults.entries, key);

  if (!has('object')) {
    s.problems.add(['streams', stream.key], '"object" is required (set it on the stream or in defaults)', stream.keyOffset);
  }
  if (modeDecided(own, defaults)) {
    const at = spot(stream, own, 'mode');
    if (eff.mode === 'incremental' && kinds.source === 'database' && !has('primary_key') && !has('update_key')) {
      s.problems.add(at.path, 'mode incremental requires primary_key and/or update_key', at.offset);
    }
    if (eff.mode === 'backfill' && !(has('primary_key') && has('update_key') && (own.rangeGiven || defaults.rangeGiven))) {
      s.problems.add(at.path, 'mode backfill requires primary_key, update_key and source_options.range', at.offset);
    }
    if (kinds.target === 'file' && !FILE_TARGET_MODES.includes(eff.mode)) {
      s.problems.add(at.path, `mode ${eff.mode} is not supported for file targets`, at.offset);
    }
  }
  if (has('sql') && (isWildcardKey(stream.key) || isFolderKey(stream.key) || kinds.source === 'file')) {
    const at = spot(stream, own, 'sql');
    s.problems.add(at.path, 'a wildcard or file stream cannot have "sql"', at.offset);
  }
}

function readStreams(s: Scope, root: YMap, entries: ReadonlyMap<string, YEntry>, defaults: ReadSettings, kinds: Kinds): ReplicationStream[] {
  const e = requireEntry(s, root, entries, 'streams');
  if (e === undefined) return [];
  const v = e.value;
  if (v.kind === 'seq' || (v.kind === 'scalar' && v.value !== null)) {
    s.problems.add(['streams'], '"streams" must be a mapping', v.offset);
    return [];
  }
  if (v.kind === 'scalar' || v.entries.length === 0) {
    s.problems.add(['streams'], '"streams" must contain at least one stream', v.offset);
    return [];
  }
  const streams: ReplicationStream[] = [];
  for (const stream of v.entries) {
    const path = ['streams', stream.key];
    let own = NO_SETTINGS;
    if (stream.value.kind === 'map') own = readStreamSettings(s, stream.value, path, kinds.target);
    else if (!(stream.value.kind === 'scalar' && stream.value.value === null)) {
      s.problems.add(path, `${quote(stream.key)} must be a mapping`, stream.value.offset);
      continue;
    }
    crossCheck(s, stream, own, defaults, kinds);
    streams.push({ key: stream.key, settings: own.settings });
  }
  return streams;
}

export function validateReplication(s: Scope, root: YMap): ReplicationFile {
  const entries = knownEntries(s, root, [], TOP_KEYS);
  const source = readConnectionName(s, root, entries, 'source');
  const target = readConnectionName(s, root, entries, 'target');
  const kinds: Kinds = { source: connectionKindOf(s, source), target: connectionKindOf(s, target) };
  const defaultsMap = readMap(s, entries.get('defaults'), []);
  const defaults = defaultsMap === undefined ? NO_SETTINGS : readStreamSettings(s, defaultsMap, ['defaults'], kinds.target);
  const streams = readStreams(s, root, entries, defaults, kinds);
  const env = readEnvMap(s, entries.get('env'), []) ?? {};
  return { kind: 'replication', source: source ?? '', target: target ?? '', defaults: defaults.settings, streams, env };
}
