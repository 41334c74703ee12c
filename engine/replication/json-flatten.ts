/**
 * `source_options.flatten: true`: nested objects of a JSON source (DuckDB
 * reads them as STRUCT columns) become columns of their own, named by their
 * path joined with `__` (`customer.address.city` → `customer__address__city`),
 * at any depth. Lists stay one column (loaded as JSON). Applied to what a
 * DuckDB-side source reads, before columns are selected, so `select:` and
 * `update_key` can name the flattened columns.
 */
import { quoteIdent } from '../targets/relation.js';
import type { DuckSession } from './duck-session.js';

const SEPARATOR = '__';

/** The columns (name, type) of `SELECT <expr>.*` — the fields of a STRUCT expression. */
async function fieldsOf(s: DuckSession, from: string, expr: string | undefined): Promise<[string, string][]> {
  const sql = expr === undefined ? `DESCRIBE SELECT * FROM ${from}` : `DESCRIBE SELECT "_s".* FROM (SELECT ${expr} AS "_s" FROM ${from} LIMIT 0)`;
  return (await s.rows(sql)).map((r) => [String(r[0]), String(r[1])]);
}

/** `expr AS "name"` items for the leaves under `expr`, recursing into STRUCT fields. */
async function leaves(s: DuckSession, from: string, expr: string | undefined, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const [name, type] of await fieldsOf(s, from, expr)) {
    const path = expr === undefined ? quoteIdent(name) : `${expr}.${quoteIdent(name)}`;
    const flat = prefix === '' ? name : `${prefix}${SEPARATOR}${name}`;
    if (type.startsWith('STRUCT(')) out.push(...(await leaves(s, from, path, flat)));
    else out.push(`${path} AS ${quoteIdent(flat)}`);
  }
  return out;
}

/**
 * A FROM text whose nested objects are flattened, or `from` itself when no
 * column is a STRUCT (then `flattened` is false, for the task log).
 */
export async function flattenedFrom(s: DuckSession, from: string): Promise<{ from: string; flattened: number }> {
  const top = await fieldsOf(s, from, undefined);
  const nested = top.filter(([, type]) => type.startsWith('STRUCT(')).length;
  if (nested === 0) return { from, flattened: 0 };
  const items = await leaves(s, from, undefined, '');
  return { from: `(SELECT ${items.join(', ')} FROM ${from}) AS "_flat"`, flattened: nested };
}
