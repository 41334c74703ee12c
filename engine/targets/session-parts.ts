/**
 * The pieces a target folder supplies to the shared `SqlSession`: its
 * dialect, its catalog queries, and the modes whose SQL differs by target
 * (full-refresh, view, seeds). Everything else (truncate,
 * append, stage, merge, probes) is shared because the docs give one SQL
 * shape for both targets.
 */
import type { Dialect } from './dialect.js';
import type { SqlDriver } from './sql-driver.js';
import type { CatalogEntry, MaterializeOptions, Relation, RelationKind, Rows, SchemaRef, SeedOptions, SeedSource } from './target.js';

export interface Column {
  readonly name: string;
  /** Type name as information_schema reports it. */
  readonly type: string;
}

export interface Introspector {
  /** Information_schema lookup. */
  relationKind(driver: SqlDriver, rel: Relation): Promise<RelationKind | null>;
  /** Columns in ordinal order; empty when the relation does not exist. */
  columns(driver: SqlDriver, rel: Relation): Promise<Column[]>;
  /** Every table and view of `schemas` in one query. */
  catalog(driver: SqlDriver, schemas: readonly SchemaRef[]): Promise<CatalogEntry[]>;
}

/** `opts.existing` when the caller read the catalog, else one lookup. */
export function relationKindOf(ctx: FlowContext, rel: Relation, opts: { readonly existing?: RelationKind | null }): Promise<RelationKind | null> {
  return opts.existing !== undefined ? Promise.resolve(opts.existing) : ctx.introspect.relationKind(ctx.driver, rel);
}

export interface FlowContext<D extends SqlDriver = SqlDriver> {
  readonly driver: D;
  readonly dialect: Dialect;
  readonly introspect: Introspector;
}

export interface TargetParts<D extends SqlDriver> {
  readonly dialect: Dialect;
  readonly introspect: Introspector;
  fullRefresh(ctx: FlowContext<D>, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  view(ctx: FlowContext<D>, rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  loadSeed(ctx: FlowContext<D>, rel: Relation, source: SeedSource, opts: SeedOptions): Promise<Rows>;
}
