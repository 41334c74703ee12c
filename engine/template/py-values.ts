/**
 * Python's view of template values. Jinja templates written for dbt expect
 * Python semantics where JavaScript differs: `'%s' % none` is `None`, a list
 * prints as `['a', 1]`, and only a `namespace()` accepts attribute assignment.
 * These helpers give the format filter, `%` and the method tables one shared
 * definition of those semantics.
 */

/** The object `namespace(...)` returns; the only target of `{% set ns.attr = … %}` (as in Jinja). */
export class Namespace {
  [attr: string]: unknown;

  constructor(attrs: Record<string, unknown>) {
    Object.assign(this, attrs);
  }
}

/** A dict literal or mapping from the context: an object with the plain Object (or null) prototype. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Python `str()`. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  return pyRepr(value);
}

/**
 * What `{{ value }}` prints: Python's str(), except that undefined prints
 * nothing (Jinja's Undefined) and an object with its own toString (a relation
 * made by the context, a macro's output) prints that text.
 */
export function pyPrint(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return pyRepr(value);
  if (value === null || typeof value === 'boolean' || Array.isArray(value) || value instanceof Namespace) return pyRepr(value);
  if (isPlainObject(value) && value.toString === Object.prototype.toString) return pyRepr(value);
  return String(value);
}

/** Python `repr()` for the value kinds a template can hold. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return reprString(value);
  if (typeof value === 'number') return pyNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isPlainObject(value) || value instanceof Namespace) {
    const body = Object.entries(value)
      .map(([k, v]) => `${reprString(k)}: ${pyRepr(v)}`)
      .join(', ');
    return value instanceof Namespace ? `<Namespace {${body}}>` : `{${body}}`;
  }
  return String(value);
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return String(n);
}

/** Python quotes with `'` unless the text holds `'` and no `"`. */
function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t');
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

/** Python truthiness: empty lists and dicts are false (JavaScript says true). */
export function pyTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}
