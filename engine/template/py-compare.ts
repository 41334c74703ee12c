/** Python's `<` for the values templates sort (list.sort(), the sort and groupby filters). */
import { isPlainObject } from './py-values.js';

/** Python's ordering for the values a template sorts: numbers, strings, booleans, lists of them. */
export function pyCompare(a: unknown, b: unknown): number {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = pyCompare(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  const x = typeof a === 'boolean' ? Number(a) : a;
  const y = typeof b === 'boolean' ? Number(b) : b;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  throw new TypeError(`'<' not supported between instances of '${kind(a)}' and '${kind(b)}'`);
}

function kind(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return isPlainObject(v) ? 'dict' : typeof v;
}

