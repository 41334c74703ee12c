/**
 * The Jinja semantics our compiled templates call at run time, passed to the
 * generated code as the closure variable `jinja` (see jinja-compiler.ts). It is
 * per compiled template rather than a patch of nunjucks' shared `runtime`
 * module, so other nunjucks users in the process keep stock behaviour.
 */
import { callArgs } from './call-args.js';
import { macroError, makeMacro } from './jinja-macro.js';
import { formatArgs, percentFormat } from './py-format.js';
import { memberLookup } from './python-methods.js';
import { isPlainObject, Namespace, pyPrint, pyTruthy } from './py-values.js';

export interface JinjaRuntime {
  /** `a + b`: lists concatenate (JavaScript would join them into a string). */
  add(a: unknown, b: unknown): unknown;
  /** `a == b`: Python's equality — lists and dicts compare by value, `1 == True`. */
  eq(a: unknown, b: unknown): boolean;
  /** `a ~ b`: the two printed as `{{ }}` prints them, joined. */
  concat(a: unknown, b: unknown): string;
  /** `a * b`: a string or list times an integer repeats it. */
  mul(a: unknown, b: unknown): unknown;
  /** `a % b`: printf formatting when `a` is a string, else Python's floored modulo. */
  mod(a: unknown, b: unknown): unknown;
  /** Python truthiness for `if`, `not`, `and`, `or`: empty lists and dicts are false. */
  truthy(value: unknown): boolean;
  /** `obj.key` with Python methods (`append`, `items`, `upper`, …). */
  member(obj: unknown, key: unknown): unknown;
  /** `{% set ns.key = value %}`: only a namespace accepts attribute assignment (as in Jinja). */
  setAttr(obj: unknown, key: unknown, value: unknown): void;
  /** `value[start:stop:step]` on a list or string (Python slice rules; null = omitted). */
  slice(value: unknown, start: number | null, stop: number | null, step: number | null): unknown;
  /** The items a filtered loop (`for x in xs if cond`) walks: a list, or a mapping's `[key, value]` pairs. */
  loopItems(value: unknown, pairs: boolean): unknown[];
  /** `{{ value }}`: Python's str() of the value; undefined prints nothing (Jinja's Undefined). */
  str(value: unknown): string;
  /** What `for x in value` walks: a mapping's keys, anything else as it is. */
  forKeys(value: unknown): unknown;
  /** `{% set a, b = value %}`: the items of `value` (a list, a string's characters, a mapping's keys). */
  unpack(value: unknown): unknown[];
  /** Fails as Python does when an unpacked value has not exactly `n` items. */
  unpackCount(items: unknown[], n: number): void;
  /** `*xs` in a call: the positional arguments `xs` holds. */
  iterable(value: unknown): unknown[];
  /** `**kw` in a call: the keyword arguments mapping `kw` holds. */
  mapping(value: unknown): Record<string, unknown>;
  /** A macro with Jinja2's calling rules (jinja-macro.ts). */
  makeMacro: typeof makeMacro;
  /** Marks an error raised inside a macro of a macro file with the macro, file and line. */
  macroError: typeof macroError;
  /** Wraps a compiled macro: a `return(v)` during the call makes the call's value `v`. */
  returnable<F extends (...args: unknown[]) => unknown>(macro: F): F;
}

/**
 * `return(v)` records `v` in the innermost macro call's slot and stops the
 * macro there, as dbt's `return` (an exception in Python) does: the rest of
 * the macro does not run, so `{% if not execute %}{{ return('') }}{% endif %}`
 * guards what follows. The value becomes the call's result.
 */
const returnSlots: { set: boolean; value: unknown }[] = [];

class MacroReturned {
  constructor(readonly slot: { set: boolean; value: unknown }) {}
}

export function macroReturn(value: unknown): string {
  const slot = returnSlots[returnSlots.length - 1];
  if (slot === undefined) throw new Error('return() used outside a macro');
  if (!slot.set) {
    slot.set = true;
    slot.value = value;
  }
  throw new MacroReturned(slot);
}

export const jinjaRuntime: JinjaRuntime = {
  add(a, b) {
    if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
    if (Array.isArray(a) || Array.isArray(b)) {
      throw new TypeError(`can only concatenate list (not "${typeName(Array.isArray(a) ? b : a)}") to list`);
    }
    return (a as number) + (b as number);
  },
  concat: (a, b) => pyPrint(a) + pyPrint(b),
  eq: pyEquals,
  mul(a, b) {
    if (typeof b === 'number' && (typeof a === 'string' || Array.isArray(a))) return repeat(a, b);
    if (typeof a === 'number' && (typeof b === 'string' || Array.isArray(b))) return repeat(b, a);
    return (a as number) * (b as number);
  },
  mod(a, b) {
    if (typeof a === 'string') return percentFormat(a, formatArgs(b));
    const x = a as number;
    const y = b as number;
    if (y === 0) throw new Error('ZeroDivisionError: integer division or modulo by zero');
    const r = x % y;
    return r !== 0 && r < 0 !== y < 0 ? r + y : r;
  },
  truthy: pyTruthy,
  member: memberLookup,
  setAttr(obj, key, value) {
    if (!(obj instanceof Namespace)) throw new TypeError('cannot assign attribute on non-namespace object');
    obj[String(key)] = value;
  },
  slice(value, start, stop, step) {
    if (typeof value !== 'string' && !Array.isArray(value)) return undefined;
    const picked = sliceIndices(value.length, start, stop, step ?? 1).map((i) => value[i]);
    return typeof value === 'string' ? picked.join('') : picked;
  },
  loopItems(value, pairs) {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    if (typeof value === 'string') return [...value];
    if (isPlainObject(value)) return pairs ? Object.entries(value) : Object.keys(value);
    if (typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function') return [...(value as Iterable<unknown>)];
    return [];
  },
  str: pyPrint,
  forKeys: (value) => (isPlainObject(value) || value instanceof Namespace ? Object.keys(value) : value),
  unpack(value) {
    if (value === null || value === undefined) throw new TypeError(`cannot unpack non-iterable ${typeName(value)} object`);
    return jinjaRuntime.iterable(value);
  },
  unpackCount(items, n) {
    if (items.length < n) throw new Error(`ValueError: not enough values to unpack (expected ${n}, got ${items.length})`);
    if (items.length > n) throw new Error(`ValueError: too many values to unpack (expected ${n})`);
  },
  iterable(value) {
    if (typeof value === 'string' || Array.isArray(value)) return [...value];
    if (isPlainObject(value)) return Object.keys(value);
    if (value !== null && typeof value === 'object' && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function') return [...(value as Iterable<unknown>)];
    throw new TypeError(`argument after * must be an iterable, not ${typeName(value)}`);
  },
  mapping(value) {
    if (isPlainObject(value) || value instanceof Namespace) return callArgs([{ ...value, __keywords: true }]).kwargs;
    throw new TypeError(`argument after ** must be a mapping, not ${typeName(value)}`);
  },
  makeMacro,
  macroError,
  returnable(macro) {
    const wrapped = function (this: unknown, ...args: unknown[]) {
      const mine = { set: false, value: undefined as unknown };
      returnSlots.push(mine);
      let out: unknown;
      try {
        out = macro.apply(this, args);
      } catch (err) {
        if (!(err instanceof MacroReturned && err.slot === mine)) throw err;
      } finally {
        const slot = returnSlots.pop()!;
        if (slot.set) out = slot.value;
      }
      return out;
    };
    return wrapped as typeof macro;
  },
};

function pyEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // undefined is JavaScript's other None: a context function that returns it means None.
  if (a === undefined || b === undefined || a === null || b === null) return (a ?? null) === (b ?? null);
  if (typeof a === 'boolean' || typeof b === 'boolean') return typeof a !== 'object' && typeof b !== 'object' && Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => pyEquals(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && pyEquals(a[k], b[k]));
  }
  return false;
}

/** The indices `range(len)[start:stop:step]` selects (CPython's PySlice_AdjustIndices). */
function sliceIndices(len: number, start: number | null, stop: number | null, step: number): number[] {
  if (step === 0) throw new Error('ValueError: slice step cannot be zero');
  const clamp = (i: number | null, dflt: number, lo: number, hi: number): number => {
    if (i === null) return dflt;
    const j = i < 0 ? i + len : i;
    return Math.min(Math.max(j, lo), hi);
  };
  const out: number[] = [];
  if (step > 0) {
    for (let i = clamp(start, 0, 0, len), end = clamp(stop, len, 0, len); i < end; i += step) out.push(i);
  } else {
    for (let i = clamp(start, len - 1, -1, len - 1), end = clamp(stop, -1, -1, len - 1); i > end; i += step) out.push(i);
  }
  return out;
}

function repeat(value: string | unknown[], times: number): string | unknown[] {
  const n = Math.max(Math.trunc(times), 0);
  if (typeof value === 'string') return value.repeat(n);
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) out.push(...value);
  return out;
}

function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  return isPlainObject(value) ? 'dict' : 'object';
}

/** `namespace(a=1)` / `namespace({'a': 1}, b=2)`: a mutable attribute bag that survives loop scopes. */
export function namespaceGlobal(...args: unknown[]): Namespace {
  return new Namespace(mergeMappings(args));
}

/** `dict(a=1)` / `dict({'a': 1}, b=2)`: a plain mapping. */
export function dictGlobal(...args: unknown[]): Record<string, unknown> {
  return mergeMappings(args);
}

function mergeMappings(args: readonly unknown[]): Record<string, unknown> {
  const { positional, kwargs } = callArgs(args);
  const out: Record<string, unknown> = {};
  for (const p of positional) {
    if (isPlainObject(p)) Object.assign(out, p);
    else if (Array.isArray(p)) for (const pair of p) if (Array.isArray(pair)) out[String(pair[0])] = pair[1];
  }
  return Object.assign(out, kwargs);
}
