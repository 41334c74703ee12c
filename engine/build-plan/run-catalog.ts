/**
 * The catalog as a run found it: read once, when the run starts (one query
 * over the run's schemas), instead of one information_schema probe per
 * model. Each model is told what its relation is (`existing`); it is the only
 * writer of that relation in the run, so the answer holds until it runs.
 *
 * `undefined` means "not known, look it up": a relation in a schema the run
 * did not read, or one naming a DuckDB catalog (the read keys the current
 * database's relations without one).
 */
import type { CatalogEntry, Relation, RelationKind, SchemaRef } from '../targets/target.js';

export interface RunCatalog {
  kindOf(rel: Relation): RelationKind | null | undefined;
}

const key = (database: string | undefined, schema: string, name = '') => `${database ?? ''}\u0000${schema}\u0000${name}`;

export function runCatalog(entries: readonly CatalogEntry[], schemas: readonly SchemaRef[]): RunCatalog {
  const read = new Set(schemas.filter((s) => s.database === undefined).map((s) => key(undefined, s.schema)));
  const kinds = new Map(entries.filter((e) => e.database === undefined).map((e) => [key(undefined, e.schema, e.name), e.kind]));
  return {
    kindOf(rel) {
      if (rel.database !== undefined || !read.has(key(undefined, rel.schema))) return undefined;
      return kinds.get(key(undefined, rel.schema, rel.name)) ?? null;
    },
  };
}

/** Knows nothing: every model looks its relation up (`test` runs, hosts that read no catalog). */
export const UNKNOWN_CATALOG: RunCatalog = { kindOf: () => undefined };
