/**
 * Python printf-style formatting (`'%s-%05.2f' % (a, b)`), shared by the
 * `format` filter and the `%` operator on a string. dbt macros build SQL with
 * it, so the conversions follow CPython: `%s` is `str()`, `%r` is `repr()`,
 * `%d` truncates floats, `%(name)s` reads a mapping, and argument-count
 * mismatches raise CPython's messages.
 */
import { isPlainObject, pyRepr, pyStr } from './py-values.js';

const SPEC = /%(?:\(([^)]*)\))?([#0\- +]*)(\d+|\*)?(?:\.(\d+|\*))?([diouxXeEfFgGcrsa%])/g;

/** `fmt % args`: `args` holds the positional values, or is one mapping for `%(name)s` specs. */
export function percentFormat(fmt: string, args: readonly unknown[] | Record<string, unknown>): string {
  const positional = Array.isArray(args) ? args : [];
  const mapping = Array.isArray(args) ? undefined : (args as Record<string, unknown>);
  let next = 0;
  const take = (): unknown => {
    if (next >= positional.length) throw new TypeError('not enough arguments for format string');
    return positional[next++];
  };
  const out = fmt.replace(SPEC, (whole, name: string | undefined, flags: string, width?: string, precision?: string, type?: string) => {
    if (type === '%') return whole === '%%' ? '%' : pad('%', flags, width);
    const w = width === '*' ? String(toInt(take(), 'width')) : width;
    const p = precision === '*' ? String(toInt(take(), 'precision')) : precision;
    let value: unknown;
    if (name !== undefined) {
      if (mapping === undefined) throw new TypeError('format requires a mapping');
      if (!(name in mapping)) throw new Error(`KeyError: '${name}'`);
      value = mapping[name];
    } else {
      value = take();
    }
    return pad(convert(value, type as string, flags, p), flags, w);
  });
  if (mapping === undefined && next < positional.length) {
    throw new TypeError('not all arguments converted during string formatting');
  }
  return out;
}

/** The right-hand side of `str % value` as Python sees it: a tuple spreads, a dict maps, anything else is one value. */
export function formatArgs(value: unknown): readonly unknown[] | Record<string, unknown> {
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) return value;
  return [value];
}

function convert(value: unknown, type: string, flags: string, precision: string | undefined): string {
  const prec = precision === undefined ? undefined : Number(precision);
  switch (type) {
    case 's':
      return prec === undefined ? pyStr(value) : pyStr(value).slice(0, prec);
    case 'r':
    case 'a':
      return prec === undefined ? pyRepr(value) : pyRepr(value).slice(0, prec);
    case 'c':
      return typeof value === 'string' ? value : String.fromCodePoint(toInt(value, '%c'));
    case 'd':
    case 'i':
    case 'u':
      return sign(Math.trunc(toNumber(value, type)), flags, (n) => n.toFixed(0));
    case 'o':
      return sign(toInt(value, type), flags, (n) => (flags.includes('#') ? '0o' : '') + n.toString(8));
    case 'x':
    case 'X': {
      const s = sign(toInt(value, type), flags, (n) => (flags.includes('#') ? '0x' : '') + n.toString(16));
      return type === 'X' ? s.toUpperCase() : s;
    }
    case 'f':
    case 'F':
      return sign(toNumber(value, type), flags, (n) => fixed(n, prec ?? 6));
    case 'e':
    case 'E': {
      const s = sign(toNumber(value, type), flags, (n) => exponent(n, prec ?? 6));
      return type === 'E' ? s.toUpperCase() : s;
    }
    default: {
      // g / G: shortest of fixed and exponent, trailing zeros dropped (CPython's rule).
      const s = sign(toNumber(value, type), flags, (n) => general(n, prec ?? 6));
      return type === 'G' ? s.toUpperCase() : s;
    }
  }
}

/** `toFixed` rounds exact ties up (0.125 → 0.13); CPython rounds them to even (0.12). `n` is non-negative. */
function fixed(n: number, digits: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : 'inf';
  const up = n.toFixed(Math.min(digits, 100));
  if (digits + 25 > 100) return up;
  const long = n.toFixed(digits + 25);
  const cut = long.length - 25;
  if (!/^50*$/.test(long.slice(cut))) return up;
  const down = long.slice(0, digits === 0 ? cut - 1 : cut);
  return Number(down.charAt(down.length - 1)) % 2 === 0 ? down : up;
}

/** CPython writes at least two exponent digits: `1.5e+00`. */
function exponent(n: number, digits: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : 'inf';
  return n.toExponential(Math.min(digits, 100)).replace(/e([+-])(\d)$/, 'e$10$2');
}

function general(n: number, digits: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : 'inf';
  const p = digits === 0 ? 1 : digits;
  const exp = n === 0 ? 0 : Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= p) return exponent(n, p - 1).replace(/\.?0+e/, 'e');
  const s = n.toFixed(Math.max(p - 1 - exp, 0));
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Applies the `+` / space sign flags to a formatted magnitude. */
function sign(n: number, flags: string, body: (abs: number) => string): string {
  const negative = n < 0 || Object.is(n, -0);
  const prefix = negative ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
  return prefix + body(Math.abs(n));
}

function pad(text: string, flags: string, width: string | undefined): string {
  const w = width === undefined ? 0 : Number(width);
  if (text.length >= w) return text;
  if (flags.includes('-')) return text.padEnd(w);
  if (flags.includes('0') && /^[+\- ]?(0[xo])?[0-9a-fA-F.]/.test(text)) {
    const head = /^[+\- ]?(0[xo])?/.exec(text)?.[0] ?? '';
    return head + text.slice(head.length).padStart(w - head.length, '0');
  }
  return text.padStart(w);
}

function toNumber(value: unknown, spec: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const kind = value === null || value === undefined ? 'NoneType' : Array.isArray(value) ? 'list' : typeof value === 'string' ? 'str' : 'object';
  throw new TypeError(`%${spec} format: a real number is required, not ${kind}`);
}

function toInt(value: unknown, spec: string): number {
  const n = toNumber(value, spec);
  if (!Number.isInteger(n)) throw new TypeError(`%${spec} format: an integer is required, not float`);
  return n;
}

const FORMAT_SPEC = /^(?:(.)?([<>^=]))?([+\- ])?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/;

/** `'{:>8.2f}'.format(x)`: Python's format-spec mini-language (fill, align, sign, width, grouping, precision, type). */
export function formatSpec(value: unknown, spec: string): string {
  if (spec === '') return pyStr(value);
  const m = FORMAT_SPEC.exec(spec);
  if (m === null) throw new Error(`ValueError: Invalid format specifier '${spec}'`);
  const [, fillChar, alignChar, signChar, alt, zero, width, grouping, precision, type] = m;
  let body: string;
  if (type === '%') body = `${convert(toNumber(value, '%') * 100, 'f', signChar ?? '', precision ?? '6')}%`;
  else if (type === 'b') body = sign(toInt(value, 'b'), signChar ?? '', (n) => (alt ? '0b' : '') + n.toString(2));
  else if (type === undefined || type === 'n') body = typeof value === 'number' && precision !== undefined ? convert(value, 'g', signChar ?? '', precision) : typeof value === 'number' ? sign(value, signChar ?? '', (n) => pyStr(n)) : pyStr(value);
  else body = convert(value, type === 'o' && alt ? 'o' : type, `${signChar ?? ''}${alt ?? ''}`, precision);
  if (type === 's' && precision !== undefined) body = body.slice(0, Number(precision));
  if (grouping !== undefined) body = body.replace(/^([^\d]*)(\d+)/, (_m, pre: string, digits: string) => pre + digits.replace(/\B(?=(\d{3})+(?!\d))/g, grouping));
  const w = Number(width ?? 0);
  if (body.length >= w) return body;
  const numeric = typeof value === 'number';
  const fill = fillChar ?? (zero !== undefined && alignChar === undefined ? '0' : ' ');
  const align = alignChar ?? (zero !== undefined ? '=' : numeric ? '>' : '<');
  const gap = w - body.length;
  if (align === '<') return body + fill.repeat(gap);
  if (align === '>') return fill.repeat(gap) + body;
  if (align === '^') return fill.repeat(Math.floor(gap / 2)) + body + fill.repeat(gap - Math.floor(gap / 2));
  const signLen = /^[+\- ]/.test(body) ? 1 : 0;
  return body.slice(0, signLen) + fill.repeat(gap) + body.slice(signLen);
}
