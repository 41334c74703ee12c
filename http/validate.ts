/**
 * Request body validation with superstruct (the body's shape is checked after auth and JSON parsing): the first
 * problem answers, unknown fields before missing ones before wrong types,
 * with the documented messages and dotted paths. `null` for an optional field
 * means absent, so nulls are dropped before validation.
 */
import { validate, type Struct } from 'superstruct';
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

type Failure = ReturnType<NonNullable<ReturnType<typeof validate>[0]>['failures']>[number];

/**
 * The value, or every failure. superstruct computes failures lazily and its
 * failure printer throws on values that cannot become text: both the first
 * check and the collection of the failures run here, so such a value is
 * retried as its printable copy (same JSON types, same failures).
 */
function check<T>(value: unknown, schema: Struct<T, unknown>): { ok: true; value: T } | { ok: false; failures: Failure[] } {
  const [err, out] = validate(value, schema, { coerce: true });
  return err ? { ok: false, failures: err.failures() } : { ok: true, value: out as T };
}

/** Validates `body` against `schema`; throws 400 with the first problem's message. */
export function validateBody<T>(body: unknown, schema: Struct<T, unknown>): T {
  const clean = dropNulls(body);
  let result: ReturnType<typeof check<T>>;
  try {
    result = check(clean, schema);
  } catch {
    result = check(printable(clean), schema);
  }
  if (result.ok) return result.value;
  const failures = result.failures;
  const path = (p: readonly (string | number)[]) => p.map(String).join('.');
  const unknown = failures.find((f) => f.type === 'never');
  if (unknown) throw badRequest(`unknown field "${path(unknown.path)}"`);
  const missing = failures.find((f) => f.value === undefined);
  if (missing) throw badRequest(`field "${path(missing.path)}" is required`);
  const f = failures[0]!;
  if (f.refinement !== undefined) throw badRequest(f.message);
  // Every array in the API holds strings: an element of the wrong type is reported on the array.
  const last = f.path[f.path.length - 1];
  if (typeof last === 'number') throw badRequest(`field "${path(f.path.slice(0, -1))}" must be an array of strings`);
  const word = f.type === 'array' ? 'an array of strings' : (TYPE_WORDS[f.type] ?? `a valid ${f.type}`);
  throw badRequest(`field "${path(f.path)}" must be ${word}`);
}
