/**
 * The selector bases that may legitimately match nothing (selector
 * grammar rules 3, 4, 5, 7 and 8): `tag:`, `path:`, `config.<key>:<value>`, file
 * globs (anything with `/`) and name globs. Exact names are not handled here
 * because an unknown exact name is an error whose wording depends on where
 * the name appears; `matchBase` returns undefined for them.
 *
 * Globs follow the selector grammar: `*` crosses `.` and `/`, `?` is one character, `[…]`
 * classes and `{a,b}` alternation. picomatch gives that with `bash: true`
 * (a single `*` behaves as a globstar) and `dot: true`; negation (`!x`) and
 * extglobs (`@(x)`) are switched off because the grammar has neither, and
 * `windows: false` keeps `/` the only separator on every platform.
 */

import { createRequire } from 'node:module';
import type picomatchType from 'picomatch';
import { EngineError } from '../errors.js';
import type { GraphNode } from './graph.js';
import type { GraphIndex } from './graph-index.js';

/** Loaded on the first glob: most commands select nothing or plain names. */
let picomatchLib: typeof picomatchType | undefined;
const picomatch = (...args: Parameters<typeof picomatchType>) => (picomatchLib ??= createRequire(import.meta.url)('picomatch') as typeof picomatchType)(...args);

const GLOB_CHARS = /[*?[{]/;
export const hasGlob = (text: string): boolean => GLOB_CHARS.test(text);

export const invalidPattern = (pattern: string): EngineError =>
  new EngineError('select', `selector '${pattern}': invalid selector pattern`);

type Matcher = (text: string) => boolean;

/**
 * Node indices (DAG order) matched by `base`, or undefined when `base` is an
 * exact name. `pattern` is the whole selector item, quoted in errors.
 */
export function matchBase(index: GraphIndex, base: string, pattern: string): number[] | undefined {
  const nodes = index.graph.nodes;
  let test: ((n: GraphNode) => boolean) | undefined;
  if (base.startsWith('tag:')) {
    const tag = base.slice('tag:'.length);
    test = (n) => n.kind !== 'seed' && n.tags.includes(tag);
  } else if (base.startsWith('path:')) {
    test = pathTest(base.slice('path:'.length), pattern);
  } else if (base.startsWith('config.') && base.includes(':')) {
    const colon = base.indexOf(':');
    const configKey = base.slice('config.'.length, colon);
    if (configKey === '') throw invalidPattern(pattern);
    test = configTest(configKey, base.slice(colon + 1), pattern);
  } else if (base.includes('/')) {
    const glob = globMatcher(stripDotSlash(base), pattern, false);
    test = (n) => glob(n.file) || glob(n.discoveryPath);
  } else if (hasGlob(base)) {
    const glob = globMatcher(base, pattern, true);
    test = (n) => glob(n.name) || glob(n.prodName);
  }
  if (!test) return undefined;
  const out: number[] = [];
  nodes.forEach((n, i) => {
    if (test(n)) out.push(i);
  });
  return out;
}

/**
 * Names compare case-insensitively, so name and config globs ignore
 * case; file paths keep their case, like the file system they come from.
 */
function globMatcher(glob: string, pattern: string, nocase: boolean): Matcher {
  try {
    return picomatch(glob, { bash: true, dot: true, nonegate: true, noextglob: true, windows: false, nocase });
  } catch {
    throw invalidPattern(pattern);
  }
}

function stripDotSlash(p: string): string {
  let s = p;
  while (s.startsWith('./')) s = s.slice(2);
  return s;
}

/** `path:<p>`: `p` is a glob, or else a file or a directory holding files. */
function pathTest(raw: string, pattern: string): (n: GraphNode) => boolean {
  let p = stripDotSlash(raw);
  while (p.endsWith('/')) p = p.slice(0, -1);
  if (hasGlob(p)) {
    const glob = globMatcher(p, pattern, false);
    return (n) => glob(n.file) || glob(n.discoveryPath);
  }
  if (p === '' || p === '.') return () => true;
  const under = `${p}/`;
  const inside = (file: string): boolean => file === p || file.startsWith(under);
  return (n) => inside(n.file) || inside(n.discoveryPath);
}

/**
 * `config.<key>:<value>` against the effective model config. `mode` and
 * `materialized` both compare the resolved mode, with the query's aliases
 * normalized the same way (`table` = `full-refresh`). Seeds never match.
 */
function configTest(configKey: string, rawValue: string, pattern: string): (n: GraphNode) => boolean {
  const k = configKey.toLowerCase();
  const isMode = k === 'mode' || k === 'materialized';
  const trimmed = rawValue.trim();
  let wanted: Matcher;
  if (hasGlob(trimmed)) {
    wanted = globMatcher(trimmed, pattern, true);
  } else {
    const v = isMode ? normalizeMode(trimmed) : trimmed.toLowerCase();
    wanted = (text) => text.toLowerCase() === v;
  }
  return (n) => {
    if (n.kind === 'seed') return false;
    const values = isMode ? [resolvedMode(n.config)] : scalarTexts(n.config[configKey] ?? n.config[k]);
    return values.some(wanted);
  };
}

/** Mode aliases that mean another mode; values are trimmed and lower-cased. */
function normalizeMode(value: string): string {
  const v = value.trim().toLowerCase();
  if (v === 'table') return 'full-refresh';
  if (v === 'snapshot') return 'append';
  return v;
}

function resolvedMode(config: Readonly<Record<string, unknown>>): string {
  if (typeof config.mode === 'string' && config.mode.trim() !== '') return normalizeMode(config.mode);
  if (typeof config.materialized === 'string' && config.materialized.trim() !== '') {
    return normalizeMode(config.materialized);
  }
  return 'full-refresh';
}

/** A config value as comparable texts: lists by element, booleans as true/false. */
function scalarTexts(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => scalarTexts(v));
  if (typeof value === 'string') return [value];
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint') return [String(value)];
  return [];
}
