/**
 * Typed reads of YAML values with the problem texts: each reader
 * returns the value when it has the right type and otherwise reports
 * `"<key>" must be <type>` at the value and returns undefined, so a validator
 * reads every key once, keeps going, and reports all problems. A null value
 * (`key:` or `key: ~`) of an optional key means "absent",.
 */
import type { ConnectionKind } from '../connections/connection.js';
import type { JobFileContext } from './job-file-context.js';
import type { PathSeg, ProblemList } from './problem.js';
import type { YEntry, YMap, YNode } from './yaml-tree.js';

/** A value written as a JSON string literal, the `"<x>"`. */
export const quote = (s: string): string => JSON.stringify(s);

/** Where a validator is: the collector, the injected context and the current path. */
export interface Scope {
  readonly problems: ProblemList;
  readonly ctx: JobFileContext;
}

export function isNull(node: YNode): boolean {
  return node.kind === 'scalar' && node.value === null;
}

/**
 * The entries of `map` whose keys are in `known`, by key; every other key is
 * reported at its position with `unknownMessage(key)`.
 */
export function knownEntries(
  s: Scope,
  map: YMap,
  path: readonly PathSeg[],
  known: ReadonlySet<string>,
  unknownMessage: (key: string) => string = (k) => `unknown key ${quote(k)}`,
): Map<string, YEntry> {
  const out = new Map<string, YEntry>();
  for (const e of map.entries) {
    if (known.has(e.key)) out.set(e.key, e);
    else s.problems.add([...path, e.key], unknownMessage(e.key), e.keyOffset);
  }
  return out;
}

function mustBe(s: Scope, e: YEntry, path: readonly PathSeg[], what: string): undefined {
  s.problems.add([...path, e.key], `${quote(e.key)} must be ${what}`, e.value.offset);
  return undefined;
}

export function readString(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'scalar' && typeof e.value.value === 'string') return e.value.value;
  return mustBe(s, e, path, 'a string');
}

export function readBool(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): boolean | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'scalar' && typeof e.value.value === 'boolean') return e.value.value;
  return mustBe(s, e, path, 'a boolean');
}

export function readInt(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): number | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'scalar' && typeof e.value.value === 'number' && Number.isInteger(e.value.value)) return e.value.value;
  return mustBe(s, e, path, 'an integer');
}

/** An integer within [min, max]: `"<key>" must be between <a> and <b>` otherwise. */
export function readIntBetween(s: Scope, e: YEntry | undefined, path: readonly PathSeg[], min: number, max: number): number | undefined {
  const n = readInt(s, e, path);
  if (n === undefined || e === undefined) return undefined;
  if (n >= min && n <= max) return n;
  return mustBe(s, e, path, `between ${min} and ${max}`);
}

function stringItems(node: YNode): string[] | undefined {
  if (node.kind !== 'seq') return undefined;
  const out: string[] = [];
  for (const item of node.items) {
    if (item.kind !== 'scalar' || typeof item.value !== 'string') return undefined;
    out.push(item.value);
  }
  return out;
}

export function readStringList(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string[] | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  return stringItems(e.value) ?? mustBe(s, e, path, 'a list of strings');
}

/** A string or a list of strings, as a list. */
export function readStringOrList(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): string[] | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'scalar' && typeof e.value.value === 'string') return [e.value.value];
  return stringItems(e.value) ?? mustBe(s, e, path, 'a string or a list of strings');
}

export function readMap(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): YMap | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'map') return e.value;
  return mustBe(s, e, path, 'a mapping');
}

/** A string from a fixed set: `<key> must be one of <values>` otherwise. */
export function readEnum<T extends string>(s: Scope, e: YEntry | undefined, path: readonly PathSeg[], values: readonly T[]): T | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  const v = e.value.kind === 'scalar' ? e.value.value : undefined;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  s.problems.add([...path, e.key], `${e.key} must be one of ${values.join(', ')}`, e.value.offset);
  return undefined;
}

export type EnvValue = string | number | boolean;

/** An `env:` map: names to string, number or boolean. */
export function readEnvMap(s: Scope, e: YEntry | undefined, path: readonly PathSeg[]): Record<string, EnvValue> | undefined {
  const map = readMap(s, e, path);
  if (map === undefined || e === undefined) return undefined;
  const out: Record<string, EnvValue> = {};
  for (const item of map.entries) {
    const v = item.value.kind === 'scalar' ? item.value.value : undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      Object.defineProperty(out, item.key, { value: v, enumerable: true, writable: true, configurable: true });
    } else {
      s.problems.add([...path, e.key, item.key], `${quote(item.key)} must be a string, number or boolean`, item.value.offset);
    }
  }
  return out;
}

/**
 * A required connection name (`source`, `target`, `connection`):
 * `"<key>" is required` when missing (reported on the mapping), `"<key>" must
 * be a connection name` when not a non-empty string.
 */
export function readConnectionName(s: Scope, map: YMap, entries: ReadonlyMap<string, YEntry>, key: string, path: readonly PathSeg[] = []): string | undefined {
  const e = entries.get(key);
  if (e === undefined) {
    s.problems.add(path, `${quote(key)} is required`, map.offset);
    return undefined;
  }
  if (e.value.kind === 'scalar' && typeof e.value.value === 'string' && e.value.value.trim() !== '') return e.value.value;
  s.problems.add([...path, key], `${quote(key)} must be a connection name`, e.value.offset);
  return undefined;
}

/** A required key's entry, reporting `"<key>" is required` on the mapping when it is missing. */
export function requireEntry(s: Scope, map: YMap, entries: ReadonlyMap<string, YEntry>, key: string, path: readonly PathSeg[] = []): YEntry | undefined {
  const e = entries.get(key);
  if (e === undefined) s.problems.add(path, `${quote(key)} is required`, map.offset);
  return e;
}

/** True when a value is resolved only at run time (`${NAME}` or a pipeline `{…}` template). */
export function isRunTimeValue(value: string): boolean {
  return value.includes('${') || value.includes('{');
}

/** The kind of a named connection when it is defined now; undefined when unknown until the run. */
export function connectionKindOf(s: Scope, name: string | undefined): ConnectionKind | undefined {
  return name === undefined || isRunTimeValue(name) ? undefined : s.ctx.connectionKind(name);
}
