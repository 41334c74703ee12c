/**
 * Relation names in the three forms the docs use: quoted for DDL/DML
 * (every part double-quoted, `"` doubled — both targets use ANSI
 * quoting), plain text for messages (`<t>`), and the temp relation of a model
 *
 */
import { createHash } from 'node:crypto';
import type { Relation, SchemaRef } from './target.js';

export function quoteIdent(part: string): string {
  return `"${part.replace(/"/g, '""')}"`;
}

export function quoteRelation(rel: Relation): string {
  return [rel.database, rel.schema, rel.name].filter((p): p is string => p !== undefined && p !== '').map(quoteIdent).join('.');
}

export function quoteSchema(s: SchemaRef): string {
  return [s.database, s.schema].filter((p): p is string => p !== undefined && p !== '').map(quoteIdent).join('.');
}

/** `<t>`: `schema.name` or `database.schema.name`, never quoted. */
export function relationText(rel: Relation): string {
  return [rel.database, rel.schema, rel.name].filter((p) => p !== undefined && p !== '').join('.');
}

/** PostgreSQL's identifier limit; temp names stay within it on every target. */
export const MAX_IDENTIFIER_BYTES = 63;
const TMP_PREFIX = '_service_tmp_';

/**
 * `"<schema>"."_service_tmp_<safe>_<runid>"` in the model's schema and
 * database: `<safe>` is the name when it is all [A-Za-z0-9_] and the whole
 * identifier fits 63 bytes. Otherwise `<safe>` is the name with every other
 * character replaced by `_`, cut to fit, then `_` and 8 hex of the full
 * name's SHA-1 — so two models whose long names share a prefix, or differ
 * only in replaced characters, never share a temp table when they run at
 * the same time. The name still ends in `_<runid>` (engine/targets/temp-sweep.ts).
 */
export function tempRelation(rel: Relation, runId: string): Relation {
  const safe = rel.name.replace(/[^A-Za-z0-9_]/g, '_');
  const room = MAX_IDENTIFIER_BYTES - TMP_PREFIX.length - 1 - runId.length;
  const middle = safe === rel.name && safe.length <= room ? safe : `${safe.slice(0, Math.max(0, room - 9))}_${nameHash(rel.name)}`;
  const name = `${TMP_PREFIX}${middle}_${runId}`;
  return rel.database !== undefined ? { database: rel.database, schema: rel.schema, name } : { schema: rel.schema, name };
}

function nameHash(name: string): string {
  return createHash('sha1').update(name).digest('hex').slice(0, 8);
}

/** `(\n<Q>\n)` so a trailing `--` comment cannot swallow the parenthesis. */
export function wrapQuery(query: string): string {
  return `(\n${query}\n)`;
}
