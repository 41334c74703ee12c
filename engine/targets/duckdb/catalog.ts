/**
 * DuckDB catalog names. A database file `x.duckdb` is the catalog `x`; when a
 * schema is also named `x`, the two-part name `x.t` is ambiguous and DuckDB
 * refuses it ("Ambiguous reference to catalog or schema"). Relations in such a
 * schema are therefore written with their catalog (`x.x.t`).
 */
import { basename } from 'node:path';
import type { Relation } from '../target.js';

/** The catalog name DuckDB gives a database file: its base name without the extension (`memory` in memory). */
export function duckdbCatalogName(path: string): string {
  if (path === ':memory:') return 'memory';
  const base = basename(path);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** `rel` with the catalog of the file at `path` when its schema would be ambiguous without it. */
export function qualifyDuckdbRelation(rel: Relation, path: string): Relation {
  const catalog = duckdbCatalogName(path);
  return rel.database === undefined && rel.schema.toLowerCase() === catalog.toLowerCase() ? { ...rel, database: catalog } : rel;
}
