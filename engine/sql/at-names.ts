/**
 * `@name` shorthand. It runs before Jinja rendering, so
 * `{# … #}` counts as a comment here, and quoted identifiers are protected
 * like strings: `"a@b"` is a column name, not a reference.
 */
import { tokenize } from './lexer.js';

export interface AtNamesResult {
  readonly sql: string;
  /** Reference texts (`stg_orders`, `staging.stg_orders`) that resolved and were replaced, in order. */
  readonly refs: string[];
}

/** `@ident` or `@schema.table`, not preceded by `@` or a word character. */
const AT_NAME = /(?<![@A-Za-z0-9_])@([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?)/g;

/**
 * Replaces each resolvable `@name` outside strings, quoted identifiers and
 * comments with `resolve(name)`. `resolve` returns the node's current full
 * name rendered, or undefined to leave the text untouched
 * (unresolved references, self-references).
 */
export function replaceAtNames(sql: string, resolve: (ref: string) => string | undefined): AtNamesResult {
  if (!sql.includes('@')) return { sql, refs: [] };
  // Protected regions in ascending order; matches arrive in ascending order too,
  // so one forward-moving cursor keeps the whole pass linear.
  const protectedRegions = tokenize(sql, { jinjaComments: true }).filter((t) => t.kind !== 'word' && t.kind !== 'punct');
  let cursor = 0;
  const refs: string[] = [];
  const out: string[] = [];
  let copied = 0;
  for (const m of sql.matchAll(AT_NAME)) {
    const start = m.index;
    const end = start + m[0].length;
    while (cursor < protectedRegions.length && protectedRegions[cursor].end <= start) cursor++;
    const region = protectedRegions[cursor];
    if (region !== undefined && region.start < end) continue; // inside or running into a protected region
    const ref = m[1];
    const replacement = resolve(ref);
    if (replacement === undefined) continue;
    out.push(sql.slice(copied, start), replacement);
    copied = end;
    refs.push(ref);
  }
  if (refs.length === 0) return { sql, refs };
  out.push(sql.slice(copied));
  return { sql: out.join(''), refs };
}
