/**
 * Helpers for the shape structs of the user's files (service_build.yml,
 * env.yaml, job files): superstruct structs that the loaders validate
 * against or take their key sets from, and that struct-to-json-schema.ts
 * turns into the JSON Schemas in schemas/. superstruct keeps no members for
 * a union and no value struct for a record, and has no descriptions, so the
 * helpers note those beside the struct for the walker.
 */
import { nullable, object, optional, pattern, record, string, union, type Struct } from 'superstruct';

export interface ShapeNote {
  readonly members?: readonly Struct<any, any>[];
  readonly values?: Struct<any, any>;
  readonly description?: string;
  /** A string's pattern, or a mapping's key pattern. */
  readonly pattern?: RegExp;
  /**
   * Schema only: a `type()` mapping whose other keys the loader ignores with a
   * warning, so an editor flags them (`targt:`) — additionalProperties: false.
   */
  readonly closed?: boolean;
  /** Schema only: the values a string takes, for an editor's enum (the loader checks them with its own messages). */
  readonly allowed?: readonly string[];
}

export const NOTES = new WeakMap<Struct<any, any>, ShapeNote>();

function note<T extends Struct<any, any>>(s: T, n: ShapeNote): T {
  NOTES.set(s, { ...NOTES.get(s), ...n });
  return s;
}

/** One of several shapes. */
export function oneOf<A, B>(members: readonly [Struct<A, any>, Struct<B, any>, ...Struct<any, any>[]]): Struct<A | B, null> {
  return note(union(members as [Struct<A, any>, Struct<B, any>]), { members });
}

/** A mapping of keys (matching `keys` when given) to `values`. */
export function mapOf<V>(values: Struct<V, any>, keys?: RegExp): Struct<Record<string, V>, null> {
  return note(record(keys ? pattern(string(), keys) : string(), values), { values, ...(keys ? { pattern: keys } : {}) });
}

/** A string matching `re`. */
export function matching(re: RegExp): Struct<string, null> {
  return note(pattern(string(), re), { pattern: re });
}

/** `s` with a description for editors. */
export function described<T extends Struct<any, any>>(s: T, description: string): T {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(s)), s) as T;
  const old = NOTES.get(s);
  return note(copy, { ...old, description });
}

/** A key that may be left out or written empty (`key:` is YAML null, treated as absent). */
export function field<T>(s: Struct<T, any>): Struct<T | null | undefined, any> {
  const f = optional(nullable(s)) as Struct<T | null | undefined, any>;
  const n = NOTES.get(s);
  return n ? note(f, n) : f;
}

/** A key that may be left out (but not written empty). */
export function maybe<T>(s: Struct<T, any>): Struct<T | undefined, any> {
  const f = optional(s) as Struct<T | undefined, any>;
  const n = NOTES.get(s);
  return n ? note(f, n) : f;
}

/** The keys an object shape declares. */
export function keysOf(s: Struct<any, any>): ReadonlySet<string> {
  return new Set(Object.keys((s.schema ?? {}) as object));
}

export { object };

/**
 * `s` (a `type()` mapping) with its JSON Schema closed: the loader still reads
 * it as an open mapping and names unknown keys on a warning, while an editor
 * marks them as errors, where a typo is seen as it is typed.
 */
export function closedForEditors<T extends Struct<any, any>>(s: T): T {
  return note(s, { closed: true });
}

/** A string whose JSON Schema lists `values` (the loader keeps its own check and messages). */
export function oneOfStrings(values: readonly string[], description: string): Struct<string, null> {
  return note(described(string(), description), { allowed: values });
}
