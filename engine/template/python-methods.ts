/**
 * Python methods on template values: `items.append(x)`, `d.items()`,
 * `name.upper()`, `', '.join(cols)`. Jinja templates call these as Python
 * methods; nunjucks would otherwise look up the JavaScript property (`append`
 * does not exist, `'a b'.split()` splits on nothing, `replace` replaces once).
 * `memberLookup` replaces nunjucks' `runtime.memberLookup` in templates we
 * compile; values of other kinds fall back to nunjucks' behaviour.
 */
import { pyCompare } from './py-compare.js';
import { formatSpec } from './py-format.js';
import { isPlainObject, pyRepr, pyStr } from './py-values.js';

type Method = (self: any, ...args: any[]) => unknown;

const LIST_METHODS: Record<string, Method> = {
  append: (self: unknown[], x: unknown) => void self.push(x),
  extend: (self: unknown[], xs: Iterable<unknown>) => void self.push(...Array.from(xs)),
  insert: (self: unknown[], i: number, x: unknown) => void self.splice(i < 0 ? Math.max(self.length + i, 0) : i, 0, x),
  pop: (self: unknown[], i?: number) => {
    if (self.length === 0) throw new Error('IndexError: pop from empty list');
    const at = i === undefined ? self.length - 1 : i < 0 ? self.length + i : i;
    if (at < 0 || at >= self.length) throw new Error('IndexError: pop index out of range');
    return self.splice(at, 1)[0];
  },
  remove: (self: unknown[], x: unknown) => {
    const at = self.indexOf(x);
    if (at === -1) throw new Error('ValueError: list.remove(x): x not in list');
    self.splice(at, 1);
  },
  index: (self: unknown[], x: unknown) => {
    const at = self.indexOf(x);
    if (at === -1) throw new Error(`ValueError: ${pyStr(x)} is not in list`);
    return at;
  },
  count: (self: unknown[], x: unknown) => self.filter((y) => y === x).length,
  copy: (self: unknown[]) => [...self],
  sort: (self: unknown[], opts?: Record<string, unknown>) => {
    self.sort(pyCompare);
    if (opts !== undefined && opts['reverse'] === true) self.reverse();
  },
  reverse: (self: unknown[]) => void self.reverse(),
  clear: (self: unknown[]) => void self.splice(0),
};

const DICT_METHODS: Record<string, Method> = {
  items: (self: object) => Object.entries(self),
  keys: (self: object) => Object.keys(self),
  values: (self: object) => Object.values(self),
  get: (self: Record<string, unknown>, key: string, dflt: unknown = null) => (Object.hasOwn(self, key) ? self[key] : dflt),
  update: (self: object, other?: object) => void Object.assign(self, withoutKeywordsMarker(other ?? {})),
  pop: (self: Record<string, unknown>, key: string, ...dflt: unknown[]) => {
    if (!Object.hasOwn(self, key)) {
      if (dflt.length > 0) return dflt[0];
      throw new Error(`KeyError: '${key}'`);
    }
    const value = self[key];
    delete self[key];
    return value;
  },
  setdefault: (self: Record<string, unknown>, key: string, dflt: unknown = null) => {
    if (!Object.hasOwn(self, key)) self[key] = dflt;
    return self[key];
  },
  copy: (self: object) => ({ ...self }),
  has_key: (self: object, key: string) => Object.hasOwn(self, key),
};

const STRING_METHODS: Record<string, Method> = {
  upper: (s: string) => s.toUpperCase(),
  lower: (s: string) => s.toLowerCase(),
  strip: (s: string, chars?: string) => stripChars(s, chars, true, true),
  lstrip: (s: string, chars?: string) => stripChars(s, chars, true, false),
  rstrip: (s: string, chars?: string) => stripChars(s, chars, false, true),
  split: (s: string, sep?: string | null, max = -1) => split(s, sep ?? undefined, max),
  startswith: (s: string, p: string | string[]) => (Array.isArray(p) ? p : [p]).some((x) => s.startsWith(x)),
  endswith: (s: string, p: string | string[]) => (Array.isArray(p) ? p : [p]).some((x) => s.endsWith(x)),
  replace: (s: string, old: string, rep: string, count = -1) => replaceCount(s, old, rep, count),
  join: (s: string, items: Iterable<unknown>) => Array.from(items, pyStr).join(s),
  format: (s: string, ...args: unknown[]) => strFormat(s, args),
  title: (s: string) => s.toLowerCase().replace(/(^|[^A-Za-z])([a-z])/g, (_m, p: string, c: string) => p + c.toUpperCase()),
  capitalize: (s: string) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase(),
  find: (s: string, sub: string, start?: number) => s.indexOf(sub, start ?? 0),
  rfind: (s: string, sub: string) => s.lastIndexOf(sub),
  index: (s: string, sub: string) => {
    const at = s.indexOf(sub);
    if (at === -1) throw new Error('ValueError: substring not found');
    return at;
  },
  rsplit: (s: string, sep?: string | null, max = -1) => rsplit(s, sep ?? undefined, max),
  splitlines: (s: string) => s.split(/\r\n|\r|\n/).filter((p, i, all) => i < all.length - 1 || p !== ''),
  partition: (s: string, sep: string) => {
    const at = s.indexOf(sep);
    return at === -1 ? [s, '', ''] : [s.slice(0, at), sep, s.slice(at + sep.length)];
  },
  rpartition: (s: string, sep: string) => {
    const at = s.lastIndexOf(sep);
    return at === -1 ? ['', '', s] : [s.slice(0, at), sep, s.slice(at + sep.length)];
  },
  zfill: (s: string, width: number) => {
    const sign = s.startsWith('-') || s.startsWith('+') ? s[0]! : '';
    return sign + s.slice(sign.length).padStart(width - sign.length, '0');
  },
  center: (s: string, width: number, fill = ' ') => {
    const total = Math.max(width - s.length, 0);
    const left = Math.floor(total / 2) + (total % 2 === 1 && width % 2 === 1 ? 1 : 0);
    return fill.repeat(left) + s + fill.repeat(total - left);
  },
  ljust: (s: string, width: number, fill = ' ') => s.padEnd(width, fill),
  rjust: (s: string, width: number, fill = ' ') => s.padStart(width, fill),
  swapcase: (s: string) => [...s].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(''),
  casefold: (s: string) => s.toLowerCase(),
  removeprefix: (s: string, p: string) => (p !== '' && s.startsWith(p) ? s.slice(p.length) : s),
  removesuffix: (s: string, p: string) => (p !== '' && s.endsWith(p) ? s.slice(0, -p.length) : s),
  isalnum: (s: string) => /^[A-Za-z0-9]+$/.test(s),
  isspace: (s: string) => /^\s+$/.test(s),
  isnumeric: (s: string) => /^\d+$/.test(s),
  isdecimal: (s: string) => /^\d+$/.test(s),
  istitle: (s: string) => /[A-Za-z]/.test(s) && s === s.toLowerCase().replace(/(^|[^A-Za-z])([a-z])/g, (_m, p: string, c: string) => p + c.toUpperCase()),
  count: (s: string, sub: string) => (sub === '' ? s.length + 1 : s.split(sub).length - 1),
  isdigit: (s: string) => /^\d+$/.test(s),
  isalpha: (s: string) => /^[A-Za-z]+$/.test(s),
  isupper: (s: string) => /[A-Z]/.test(s) && s === s.toUpperCase(),
  islower: (s: string) => /[a-z]/.test(s) && s === s.toLowerCase(),
};

/** `obj.key` / `obj[key]` in a template: Python methods first (as Jinja's getattr), then the JavaScript member. */
export function memberLookup(obj: unknown, key: unknown): unknown {
  if (obj === undefined || obj === null) return undefined;
  if (typeof key === 'string') {
    const table = Array.isArray(obj) ? LIST_METHODS : typeof obj === 'string' ? STRING_METHODS : isPlainObject(obj) ? DICT_METHODS : undefined;
    const method = table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
    if (method !== undefined) return (...args: unknown[]) => method(obj, ...args);
  }
  if ((Array.isArray(obj) || typeof obj === 'string') && typeof key === 'number' && key < 0) return obj[obj.length + key];
  const value = (obj as Record<string | number, unknown>)[key as string];
  if (typeof value === 'function') {
    const bound = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(obj, args);
    // A callable that also has attributes (Python's `datetime.datetime(...)` and `datetime.datetime.now()`) keeps them.
    for (const k in value) (bound as unknown as Record<string, unknown>)[k] = (value as unknown as Record<string, unknown>)[k];
    return bound;
  }
  return value;
}

/** nunjucks marks a call's keyword arguments with `__keywords: true`; a mapping passed on must not carry it. */
function withoutKeywordsMarker(value: object): object {
  if (!('__keywords' in value)) return value;
  const { __keywords: _marker, ...rest } = value as Record<string, unknown>;
  return rest;
}

function stripChars(s: string, chars: string | undefined, left: boolean, right: boolean): string {
  const isStrip = (c: string): boolean => (chars === undefined || chars === null ? /\s/.test(c) : chars.includes(c));
  let start = 0;
  let end = s.length;
  while (left && start < end && isStrip(s[start] as string)) start++;
  while (right && end > start && isStrip(s[end - 1] as string)) end--;
  return s.slice(start, end);
}

/** Python `str.rsplit`: `split` counted from the right. */
function rsplit(s: string, sep: string | undefined, max: number): string[] {
  if (max < 0 || sep === undefined) {
    if (max < 0) return split(s, sep, max);
    const parts = s.trim().split(/\s+/).filter((p) => p !== '');
    if (parts.length <= max + 1) return parts;
    return [parts.slice(0, parts.length - max).join(' '), ...parts.slice(parts.length - max)];
  }
  if (sep === '') throw new Error('ValueError: empty separator');
  const parts = s.split(sep);
  return parts.length <= max + 1 ? parts : [parts.slice(0, parts.length - max).join(sep), ...parts.slice(parts.length - max)];
}

/** Python `str.split`: no separator splits on runs of whitespace and drops empty ends. */
function split(s: string, sep: string | undefined, max: number): string[] {
  if (sep === undefined) {
    const parts = s.trim().split(/\s+/).filter((p) => p !== '');
    if (max < 0 || parts.length <= max + 1) return parts;
    const head = parts.slice(0, max);
    let rest = s.trimStart();
    for (const p of head) rest = rest.slice(rest.indexOf(p) + p.length).trimStart();
    return [...head, rest];
  }
  if (sep === '') throw new Error('ValueError: empty separator');
  const parts = s.split(sep);
  return max < 0 || parts.length <= max + 1 ? parts : [...parts.slice(0, max), parts.slice(max).join(sep)];
}

function replaceCount(s: string, old: string, rep: string, count: number): string {
  if (count < 0) return s.split(old).join(rep);
  let out = s;
  let from = 0;
  for (let n = 0; n < count; n++) {
    const at = out.indexOf(old, from);
    if (at === -1) break;
    out = out.slice(0, at) + rep + out.slice(at + old.length);
    from = at + rep.length + (old === '' ? 1 : 0);
  }
  return out;
}

/** `'{} {name}'.format(a, name=b)`: auto-numbered, indexed and named fields; `{{`/`}}` escape braces. */
function strFormat(s: string, args: unknown[]): string {
  const last = args[args.length - 1];
  const named = isPlainObject(last) && last['__keywords'] === true ? (args.pop() as Record<string, unknown>) : {};
  let auto = 0;
  return s.replace(/\{\{|\}\}|\{([^{}:!]*)(?:!([rsa]))?(?::([^{}]*))?\}/g, (whole, field: string | undefined, conv: string | undefined, spec: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    const key = field ?? '';
    let value: unknown;
    if (key === '') value = args[auto++];
    else if (/^\d+$/.test(key)) value = args[Number(key)];
    else if (!Object.hasOwn(named, key.split('.')[0]!)) throw new Error(`KeyError: '${key}'`);
    else value = key.split('.').reduce<unknown>((v, part) => memberLookup(v, part), named);
    return formatSpec(conv === 'r' || conv === 'a' ? pyRepr(value) : value, spec ?? '');
  });
}
