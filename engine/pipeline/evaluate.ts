/**
 * The pipeline expression interpreter: walks the syntax tree
 * of engine/jobs/expression.ts over JSON values. Nothing is ever compiled —
 * no eval, Function, vm or template engine — and property reads only see a
 * value's own keys, so a template cannot reach a prototype:
 *
 * - names resolve to scopes (`env`, `store`, `state`, `loop`, `timestamp`,
 *   `execution`, and for model hooks `model`, `target`); an unknown scope,
 *   a missing key, an index out of range and any read on null yield null;
 * - `__proto__`, `prototype` and `constructor` are rejected as member names
 *   (by the parser) and as index keys (here);
 * - `+` concatenates when either side is a string, otherwise adds numbers;
 *   other arithmetic needs numbers; division by zero, ordering comparisons
 *   of mismatched types and unknown arguments are evaluation errors that fail
 *   the step;
 * - `==` / `!=` compare values deeply; `and`/`or`/`not` yield booleans;
 *   falsy: false, null, 0, "", [], {}.
 */
import { EngineError } from '../errors.js';
import { parseExpression, type Expr } from '../jobs/index.js';

export type Value = null | boolean | number | string | readonly Value[] | { readonly [key: string]: Value };

/** A failed evaluation: the step fails with this message. */
export class EvaluationError extends EngineError {
  constructor(message: string) {
    super('node', message);
    this.name = 'EvaluationError';
  }
}

/**
 * A value that cannot be read: a file `env:` entry whose `${NAME}` did not
 * resolve. Reading it fails the step with `message`.
 */
export class Unresolved {
  constructor(readonly message: string) {}
}

export interface EvalScope {
  /** Root objects by scope name. */
  readonly roots: ReadonlyMap<string, unknown>;
  /** The clock of `now()`; defaults to the system clock. */
  readonly now?: () => Date;
}

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
/** Longest string an expression may build (a `goto` loop doubling a string must not exhaust memory). */
export const MAX_STRING_LENGTH = 16 * 1024 * 1024;

function bounded(s: string): string {
  if (s.length > MAX_STRING_LENGTH) throw new EvaluationError(`string longer than ${MAX_STRING_LENGTH} characters`);
  return s;
}
const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** A stored value as an expression value: undefined → null, unresolved values fail. */
function settle(v: unknown): Value {
  if (v === undefined) return null;
  if (v instanceof Unresolved) throw new EvaluationError(v.message);
  return v as Value;
}

function checkKey(key: string): void {
  if (FORBIDDEN.has(key)) throw new EvaluationError(`name ${JSON.stringify(key)} is not allowed`);
}

/** `object.key` / `object[key]`: own keys only; anything missing is null. */
export function readKey(object: unknown, key: string | number): Value {
  if (typeof key === 'string') checkKey(key);
  if (object === null || object === undefined) return null;
  if (Array.isArray(object) || typeof object === 'string') {
    const i = typeof key === 'number' ? key : /^\d+$/.test(key) ? Number(key) : NaN;
    if (!Number.isInteger(i) || i < 0 || i >= object.length) return null;
    return settle(object[i]);
  }
  if (typeof object === 'object') {
    const k = String(key);
    return has(object, k) ? settle((object as Record<string, unknown>)[k]) : null;
  }
  return null;
}

export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number' && Number.isNaN(v)) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** JSON text of a value (bigints as numbers); used for objects and lists in templates. */
export function toJson(v: unknown): string {
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x)) ?? 'null';
}

/** How a value reads inside text: strings as is, null as "", objects and lists as JSON. */
export function toText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return toJson(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => has(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function num(v: Value, op: string): number {
  if (typeof v !== 'number') throw new EvaluationError(`operator ${op} needs numbers, got ${typeName(v)}`);
  return v;
}

function finite(n: number, op: string): number {
  if (!Number.isFinite(n)) throw new EvaluationError(`operator ${op}: result is not a finite number`);
  return n;
}

function order(op: string, a: Value, b: Value): boolean {
  const bothNumbers = typeof a === 'number' && typeof b === 'number';
  const bothStrings = typeof a === 'string' && typeof b === 'string';
  if (!bothNumbers && !bothStrings) throw new EvaluationError(`cannot compare ${typeName(a)} and ${typeName(b)} with ${op}`);
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x >= y;
  }
}

function arity(name: string, args: readonly Value[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new EvaluationError(`${name}() takes ${want} argument(s), got ${args.length}`);
  }
}

function str(name: string, v: Value): string {
  if (typeof v === 'string') return v;
  if (v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new EvaluationError(`${name}() needs a string, got ${typeName(v)}`);
}

function toInt(v: Value): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new EvaluationError(`int() cannot convert ${v}`);
    return Math.trunc(v);
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^\s*[-+]?\d+(\.\d+)?\s*$/.test(v)) return Math.trunc(Number(v));
  throw new EvaluationError(`int() cannot convert ${typeName(v)} ${toJson(v)}`);
}

function toFloat(v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    if (Number.isFinite(n)) return n;
  }
  throw new EvaluationError(`float() cannot convert ${typeName(v)} ${toJson(v)}`);
}

/** JSON-safe copy of a parsed JSON value, with forbidden keys refused. */
function fromJson(text: string): Value {
  try {
    return JSON.parse(text, (k, v) => {
      if (FORBIDDEN.has(k)) throw new EvaluationError(`json(): key ${JSON.stringify(k)} is not allowed`);
      return v;
    }) as Value;
  } catch (err) {
    if (err instanceof EvaluationError) throw err;
    throw new EvaluationError(`json(): invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

type Fn = (args: readonly Value[], scope: EvalScope) => Value;

const FUNCTIONS: ReadonlyMap<string, Fn> = new Map<string, Fn>([
  ['contains', (a) => {
    arity('contains', a, 2);
    const [h, n] = a as [Value, Value];
    if (typeof h === 'string') return h.includes(str('contains', n));
    if (Array.isArray(h)) return h.some((x) => deepEqual(x, n));
    if (h !== null && typeof h === 'object') return typeof n === 'string' && !FORBIDDEN.has(n) && has(h, n);
    if (h === null) return false;
    throw new EvaluationError(`contains() needs a string, list or object, got ${typeName(h)}`);
  }],
  ['length', (a) => {
    arity('length', a, 1);
    const v = a[0]!;
    if (v === null) return 0;
    if (typeof v === 'string' || Array.isArray(v)) return v.length;
    if (typeof v === 'object') return Object.keys(v).length;
    throw new EvaluationError(`length() needs a string, list or object, got ${typeName(v)}`);
  }],
  ['upper', (a) => (arity('upper', a, 1), str('upper', a[0]!).toUpperCase())],
  ['lower', (a) => (arity('lower', a, 1), str('lower', a[0]!).toLowerCase())],
  ['trim', (a) => (arity('trim', a, 1), str('trim', a[0]!).trim())],
  ['replace', (a) => (arity('replace', a, 3), bounded(str('replace', a[0]!).split(str('replace', a[1]!)).join(str('replace', a[2]!))))],
  ['split', (a) => {
    arity('split', a, 2);
    const s = str('split', a[0]!);
    return s === '' ? [] : s.split(str('split', a[1]!));
  }],
  ['split_part', (a) => {
    arity('split_part', a, 3);
    const n = toInt(a[2]!);
    if (n < 1) throw new EvaluationError('split_part() position must be 1 or more');
    return str('split_part', a[0]!).split(str('split_part', a[1]!))[n - 1] ?? '';
  }],
  ['join', (a) => {
    arity('join', a, 1, 2);
    const list = a[0]!;
    if (!Array.isArray(list)) throw new EvaluationError(`join() needs a list, got ${typeName(list)}`);
    return bounded(list.map(toText).join(a.length > 1 ? str('join', a[1]!) : ','));
  }],
  ['coalesce', (a) => a.find((v) => v !== null) ?? null],
  ['keys', (a) => {
    arity('keys', a, 1);
    const v = a[0]!;
    if (v === null) return [];
    if (typeof v === 'object' && !Array.isArray(v)) return Object.keys(v);
    throw new EvaluationError(`keys() needs an object, got ${typeName(v)}`);
  }],
  ['int', (a) => (arity('int', a, 1), toInt(a[0]!))],
  ['float', (a) => (arity('float', a, 1), toFloat(a[0]!))],
  ['string', (a) => (arity('string', a, 1), toText(a[0]!))],
  // A string is parsed as JSON; any other value is encoded as JSON text.
  ['json', (a) => (arity('json', a, 1), typeof a[0] === 'string' ? fromJson(a[0]) : toJson(a[0]))],
  ['now', (a, scope) => (arity('now', a, 0), (scope.now?.() ?? new Date()).toISOString())],
]);

export function evaluate(expr: Expr, scope: EvalScope): Value {
  switch (expr.type) {
    case 'literal':
      return expr.value;
    case 'list':
      return expr.items.map((e) => evaluate(e, scope));
    case 'name':
      checkKey(expr.name);
      return settle(scope.roots.get(expr.name) ?? null);
    case 'member':
      return readKey(evaluate(expr.object, scope), expr.property);
    case 'index': {
      const object = evaluate(expr.object, scope);
      const key = evaluate(expr.index, scope);
      if (typeof key === 'number') return readKey(object, key);
      if (typeof key === 'string') return readKey(object, key);
      if (key === null) return null;
      throw new EvaluationError(`cannot index with ${typeName(key)}`);
    }
    case 'call': {
      const fn = FUNCTIONS.get(expr.callee);
      if (fn === undefined) throw new EvaluationError(`unknown function ${JSON.stringify(expr.callee)}`);
      return fn(expr.args.map((e) => evaluate(e, scope)), scope);
    }
    case 'unary': {
      const v = evaluate(expr.operand, scope);
      return expr.op === '!' ? !truthy(v) : -num(v, '-');
    }
    case 'binary':
      return binary(expr, scope);
  }
}

function binary(expr: Extract<Expr, { type: 'binary' }>, scope: EvalScope): Value {
  if (expr.op === '&&') return truthy(evaluate(expr.left, scope)) && truthy(evaluate(expr.right, scope));
  if (expr.op === '||') return truthy(evaluate(expr.left, scope)) || truthy(evaluate(expr.right, scope));
  const a = evaluate(expr.left, scope);
  const b = evaluate(expr.right, scope);
  switch (expr.op) {
    case '==':
      return deepEqual(a, b);
    case '!=':
      return !deepEqual(a, b);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return order(expr.op, a, b);
    case '+':
      if (typeof a === 'string' || typeof b === 'string') {
        const left = toText(a);
        const right = toText(b);
        if (left.length + right.length > MAX_STRING_LENGTH) throw new EvaluationError(`string longer than ${MAX_STRING_LENGTH} characters`);
        return left + right;
      }
      if (typeof a !== 'number' || typeof b !== 'number') throw new EvaluationError(`cannot add ${typeName(a)} and ${typeName(b)}`);
      return finite(a + b, '+');
    case '-':
      return finite(num(a, '-') - num(b, '-'), '-');
    case '*':
      return finite(num(a, '*') * num(b, '*'), '*');
    case '/':
    case '%': {
      const x = num(a, expr.op);
      const y = num(b, expr.op);
      if (y === 0) throw new EvaluationError('division by zero');
      return expr.op === '/' ? x / y : x % y;
    }
  }
}

const PARSED_CACHE_SIZE = 1000;
const parsed = new Map<string, Expr>();

/** The syntax tree of `src`, cached (goto loops and loop iterations evaluate the same text again). */
export function parseCached(src: string): Expr {
  let expr = parsed.get(src);
  if (expr === undefined) {
    try {
      expr = parseExpression(src);
    } catch (err) {
      throw new EvaluationError(err instanceof Error ? err.message : String(err));
    }
    if (parsed.size >= PARSED_CACHE_SIZE) parsed.delete(parsed.keys().next().value!);
    parsed.set(src, expr);
  }
  return expr;
}

/** Parses and evaluates `src`; a syntax error becomes an EvaluationError. */
export function evaluateSource(src: string, scope: EvalScope): Value {
  return evaluate(parseCached(src), scope);
}
