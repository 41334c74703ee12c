/**
 * Jinja filters nunjucks lacks. nunjucks already has the common ones (upper,
 * lower, trim, replace, join, default/d, length, first, last, list, sort,
 * int, float, round, select/reject(attr), sum, batch, groupby, title, …);
 * these fill the gaps dbt-style SQL templates use (attribute-filters.ts:
 * Jinja2's `attribute=`; type-filters.ts: dbt's `as_number` and co.).
 */
import { attributeFilters, toList } from './attribute-filters.js';
import { callArgs } from './call-args.js';
import { typeFilters } from './type-filters.js';
import { percentFormat } from './py-format.js';
import { isPlainObject, Namespace } from './py-values.js';

type Filter = (this: unknown, value: unknown, ...args: unknown[]) => unknown;

/** `'%s-%d'|format(a, b)` or `'%(x)s'|format(x=1)`: Python printf formatting. */
function format(value: unknown, ...args: unknown[]): string {
  const { positional, kwargs } = callArgs(args);
  if (positional.length > 0 && Object.keys(kwargs).length > 0) {
    throw new TypeError("can't handle positional and keyword arguments at the same time");
  }
  return percentFormat(String(value ?? ''), positional.length > 0 || Object.keys(kwargs).length === 0 ? positional : kwargs);
}

/**
 * `x|tojson` / `x|tojson(2)`: the text Jinja produces (Python `json.dumps` with
 * sorted keys, `", "`/`": "` separators, non-ASCII escaped as `\uXXXX` and
 * `<>&'` escaped as `\u00XX`), so a model migrated from dbt renders
 * byte-identical SQL.
 */
function tojson(value: unknown, indent?: unknown): string {
  const { positional, kwargs } = callArgs(indent === undefined ? [] : [indent]);
  const width = (kwargs['indent'] ?? positional[0]) as number | undefined;
  return dumps(value, typeof width === 'number' ? ' '.repeat(width) : undefined, '')
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/'/g, '\\u0027')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function dumps(value: unknown, indent: string | undefined, depth: string): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  const inner = indent === undefined ? '' : depth + indent;
  const sep = indent === undefined ? ', ' : `,\n${inner}`;
  const open = indent === undefined ? '' : `\n${inner}`;
  const close = indent === undefined ? '' : `\n${depth}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${open}${value.map((v) => dumps(v, indent, inner)).join(sep)}${close}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return '{}';
  const body = entries.map(([k, v]) => `${JSON.stringify(k)}: ${dumps(v, indent, inner)}`).join(sep);
  return `{${open}${body}${close}}`;
}

/** `xs|unique`: first occurrences, in order. */
function unique(value: unknown): unknown[] {
  return [...new Set(toList(value))];
}

/** `d|items`: `[key, value]` pairs. */
function items(value: unknown): unknown[] {
  return isPlainObject(value) || value instanceof Namespace ? Object.entries(value) : [];
}

function min(value: unknown): unknown {
  const xs = toList(value);
  return xs.length === 0 ? undefined : xs.reduce((a, b) => ((b as number) < (a as number) ? b : a));
}

function max(value: unknown): unknown {
  const xs = toList(value);
  return xs.length === 0 ? undefined : xs.reduce((a, b) => ((b as number) > (a as number) ? b : a));
}

function count(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  return toList(value).length;
}

export const jinjaFilters: Readonly<Record<string, Filter>> = { format, tojson, unique, items, min, max, count, ...attributeFilters, ...typeFilters };
