/**
 * Request body validation with superstruct (the body's shape is checked after auth and JSON parsing): the first
 * problem answers, unknown fields before missing ones before wrong types, and the search stops there,
 * with the documented messages and dotted paths. `null` for an optional field
 * means absent, so nulls are dropped before validation.
 */
import { is, validate, type Struct, type StructError } from 'superstruct';
import { badRequest } from './http-error.js';

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  type: 'an object',
  record: 'an object',
  array: 'an array',
};

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, dropNulls(v)]));
  }
  return value;
}

const unprintable = (v: object) =>
  ['toString', 'valueOf'].some((key) => Object.hasOwn(v, key) && typeof (v as Record<string, unknown>)[key] !== 'function');

/**
 * A copy of `value` where every object whose own `toString` or `valueOf` is
 * not a function (`{"toString": "x"}`) is an empty object: superstruct's
 * failure printer cannot turn such a value into text and throws instead of
 * reporting the problem. The JSON type stays the same, so the copy fails with
 * the message the original deserves (`field "name" must be a string`).
 * Depth is capped before validation, so recursion is safe here.
 */
function printable(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(printable);
  if (unprintable(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printable(v)]));
}

type Failure = Pick<StructError, 'path' | 'type' | 'value' | 'refinement' | 'message'>;
type Path = (string | number)[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
/** The field map of an `object()` struct (also through `optional()`, which keeps it); undefined for other structs. */
const fieldsOf = (s: Struct<unknown, unknown>): Record<string, Struct<unknown, unknown>> | undefined =>
  s.type === 'object' && isObject(s.schema) ? (s.schema as Record<string, Struct<unknown, unknown>>) : undefined;

/**
 * The first field the body has and the schema does not, in the order
 * superstruct would report it (a level's known fields, recursively, before
 * its unknown ones). Stops at the first: a body of 40,000 unknown keys costs
 * one lookup, not 40,000 failures.
 */
function firstUnknown(value: unknown, schema: Struct<unknown, unknown>, path: Path): Path | undefined {
  const fields = fieldsOf(schema);
  if (!fields || !isObject(value)) return undefined;
  for (const key of Object.keys(fields)) {
    const hit = firstUnknown(value[key], fields[key]!, [...path, key]);
    if (hit) return hit;
  }
  for (const key of Object.keys(value)) if (!Object.hasOwn(fields, key)) return [...path, key];
  return undefined;
}

/** The first required field the body lacks (same order), stopping there. */
function firstMissing(value: unknown, schema: Struct<unknown, unknown>, path: Path): Path | undefined {
  const fields = fieldsOf(schema);
  if (!fields || !isObject(value)) return undefined;
  for (const [key, field] of Object.entries(fields)) {
    if (value[key] === undefined) {
      if (!is(undefined, field)) return [...path, key];
      continue;
    }
    const hit = firstMissing(value[key], field, [...path, key]);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * The value, or its first failure. superstruct stops at the first failure
 * unless asked for all of them (`failures()`), which this never does; its
 * failure printer throws on values that cannot become text, so such a value
 * is retried as its printable copy (same JSON types, same failure).
 */
function check<T>(value: unknown, schema: Struct<T, unknown>): { ok: true; value: T } | { ok: false; failure: Failure } {
  const [err, out] = validate(value, schema, { coerce: true });
  return err ? { ok: false, failure: err } : { ok: true, value: out as T };
}

const dotted = (p: readonly (string | number)[]) => p.map(String).join('.');

/** Validates `body` against `schema`; throws 400 with the first problem's message. */
export function validateBody<T>(body: unknown, schema: Struct<T, unknown>): T {
  const clean = dropNulls(body);
  const anySchema = schema as Struct<unknown, unknown>;
  const unknown = firstUnknown(clean, anySchema, []);
  if (unknown) throw badRequest(`unknown field "${dotted(unknown)}"`);
  const missing = firstMissing(clean, anySchema, []);
  if (missing) throw badRequest(`field "${dotted(missing)}" is required`);
  let result: ReturnType<typeof check<T>>;
  try {
    result = check(clean, schema);
  } catch {
    result = check(printable(clean), schema);
  }
  if (result.ok) return result.value;
  const f = result.failure;
  // Structs the walks above do not enter (none today) still answer with the same messages.
  if (f.type === 'never') throw badRequest(`unknown field "${dotted(f.path)}"`);
  if (f.value === undefined) throw badRequest(`field "${dotted(f.path)}" is required`);
  if (f.refinement !== undefined) throw badRequest(f.message);
  // Every array in the API holds strings: an element of the wrong type is reported on the array.
  const last = f.path[f.path.length - 1];
  if (typeof last === 'number') throw badRequest(`field "${dotted(f.path.slice(0, -1))}" must be an array of strings`);
  const word = f.type === 'array' ? 'an array of strings' : (TYPE_WORDS[f.type] ?? `a valid ${f.type}`);
  throw badRequest(`field "${dotted(f.path)}" must be ${word}`);
}
