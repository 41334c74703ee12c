/**
 * Filters that take Jinja2's `attribute=` (map, sort, groupby, sum,
 * selectattr/rejectattr, join): a dotted path whose integer parts are
 * indexes, so `rows | map(attribute=0)` picks each row's first item and
 * `attribute='cols.0.name'` walks through a list. nunjucks reads `attribute`
 * as one property name and has neither integer indexes nor Jinja2's
 * `sort(case_sensitive=)` / `groupby` tuples.
 */
import { callArgs } from './call-args.js';
import { pyCompare } from './py-compare.js';
import { memberLookup } from './python-methods.js';
import { isPlainObject, pyPrint } from './py-values.js';

type Filter = (this: unknown, value: unknown, ...args: unknown[]) => unknown;
interface FilterThis {
  env: { getFilter(n: string): Filter; getTest(n: string): (this: unknown, v: unknown, ...a: unknown[]) => unknown };
}

/** Jinja2's make_attrgetter: `'a.0.b'` → item.a[0].b; an integer is one index. */
export function attrGetter(attribute: unknown): (item: unknown) => unknown {
  const path = typeof attribute === 'number' ? [attribute] : String(attribute).split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return (item) => {
    let v: unknown = item;
    for (const key of path) {
      if (v === undefined || v === null) return undefined;
      v = typeof key === 'string' && isPlainObject(v) ? v[key] : memberLookup(v, key);
    }
    return v;
  };
}

export function toList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (isPlainObject(value)) return Object.keys(value);
  if (typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function') return [...(value as Iterable<unknown>)];
  return [];
}

/** `xs|map(attribute='name')`, `xs|map(attribute=0)` or `xs|map('upper')`: attributes or a filter's results. */
function map(this: unknown, value: unknown, ...args: unknown[]): unknown[] {
  const items = toList(value);
  const { positional, kwargs } = callArgs(args);
  if (kwargs['attribute'] !== undefined) {
    const get = attrGetter(kwargs['attribute']);
    return items.map((item) => {
      const got = get(item);
      return got === undefined && 'default' in kwargs ? kwargs['default'] : got;
    });
  }
  const [name, ...rest] = positional;
  if (typeof name !== 'string') throw new TypeError('map() needs a filter name or attribute=');
  const filter = (this as FilterThis).env.getFilter(name);
  return items.map((item) => filter.call(this, item, ...rest));
}

const fold = (caseSensitive: boolean) => (v: unknown) => (!caseSensitive && typeof v === 'string' ? v.toLowerCase() : v);

/** `sort(reverse=false, case_sensitive=false, attribute=none)`, positional or by keyword; stable, as Python's. */
function sort(value: unknown, ...args: unknown[]): unknown[] {
  const { positional, kwargs } = callArgs(args);
  const reverse = Boolean(kwargs['reverse'] ?? positional[0] ?? false);
  const key = fold(Boolean(kwargs['case_sensitive'] ?? positional[1] ?? false));
  const attribute = kwargs['attribute'] ?? positional[2];
  const get = attribute === undefined || attribute === null ? (v: unknown) => v : attrGetter(attribute);
  const sorted = [...toList(value)].sort((a, b) => pyCompare(key(get(a)), key(get(b))));
  return reverse ? sorted.reverse() : sorted;
}

/** `groupby(attribute, default=none, case_sensitive=false)`: sorted `[grouper, list]` pairs, also readable as `.grouper` / `.list`. */
function groupby(value: unknown, ...args: unknown[]): unknown[] {
  const { positional, kwargs } = callArgs(args);
  const get = attrGetter(kwargs['attribute'] ?? positional[0]);
  const dflt = kwargs['default'] ?? positional[1];
  const key = fold(Boolean(kwargs['case_sensitive'] ?? positional[2] ?? false));
  const keyed = toList(value).map((item) => {
    const k = get(item);
    return { item, k: k === undefined ? dflt : k };
  });
  keyed.sort((a, b) => pyCompare(key(a.k), key(b.k)));
  const groups: (unknown[] & { grouper?: unknown; list?: unknown[] })[] = [];
  for (const { item, k } of keyed) {
    const last = groups[groups.length - 1];
    if (last !== undefined && pyCompare(key(last.grouper), key(k)) === 0) last.list!.push(item);
    else {
      const list = [item];
      groups.push(Object.assign([k, list], { grouper: k, list }));
    }
  }
  return groups;
}

/** `sum(attribute=none, start=0)`. */
function sum(value: unknown, ...args: unknown[]): unknown {
  const { positional, kwargs } = callArgs(args);
  const attribute = kwargs['attribute'] ?? positional[0];
  const get = attribute === undefined || attribute === null ? (v: unknown) => v : attrGetter(attribute);
  return toList(value).reduce<number>((acc, v) => acc + (get(v) as number), (kwargs['start'] ?? positional[1] ?? 0) as number);
}

/** `join(d='', attribute=none)`. */
function join(value: unknown, ...args: unknown[]): string {
  const { positional, kwargs } = callArgs(args);
  const sep = String(kwargs['d'] ?? positional[0] ?? '');
  const attribute = kwargs['attribute'] ?? positional[1];
  const get = attribute === undefined || attribute === null ? (v: unknown) => v : attrGetter(attribute);
  return toList(value)
    .map((v) => pyPrint(get(v)))
    .join(sep);
}

/** `selectattr(attribute, test='truthy', *args)` and `rejectattr`: Jinja2's, with any test. */
function selectBy(keep: boolean): Filter {
  return function (this: unknown, value: unknown, attribute: unknown, ...args: unknown[]) {
    const get = attrGetter(attribute);
    const [testName, ...testArgs] = args;
    const check =
      testName === undefined
        ? (v: unknown) => Boolean(v) && !(Array.isArray(v) && v.length === 0)
        : (v: unknown) => Boolean((this as FilterThis).env.getTest(String(testName)).call(this, v, ...testArgs));
    return toList(value).filter((item) => check(get(item)) === keep);
  };
}

export const attributeFilters: Readonly<Record<string, Filter>> = {
  /** `list`: a dict's keys, a string's characters (nunjucks gave `{key, value}` objects for a dict). */
  list: (value) => [...toList(value)],
  map,
  sort,
  groupby,
  sum,
  join,
  selectattr: selectBy(true),
  rejectattr: selectBy(false),
};
