/**
 * `TargetSession` over one `SqlDriver`: the shared flows plus the target's
 * own parts (session-parts.ts). One instance per database connection; calls
 * must not overlap (see target.ts).
 */
import { EngineError } from '../errors.js';
import { formatLiteral } from './literal.js';
import { quoteIdent, quoteRelation, relationText } from './relation.js';
import type { FlowContext, TargetParts } from './session-parts.js';
import { SqlError, type SqlDriver } from './sql-driver.js';
import { appendMode, createSchemas, dropRelation, mergeStaged, stageQuery, truncateMode } from './table-modes.js';
import type {
  CatalogEntry,
  MaterializeOptions,
  MaxValue,
  MergeOptions,
  MergeStrategy,
  Relation,
  RelationKind,
  Rows,
  SchemaRef,
  SeedOptions,
  SeedSource,
  QueryResult,
  TargetSession,
} from './target.js';

function toNumber(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  const n = Number(String(v));
  if (Number.isNaN(n)) throw new EngineError('node', `expected a number, got '${String(v)}'`);
  return n;
}

export class SqlSession<D extends SqlDriver> implements TargetSession {
  private readonly ctx: FlowContext<D>;

  constructor(
    private readonly driver: D,
    private readonly parts: TargetParts<D>,
  ) {
    this.ctx = { driver, dialect: parts.dialect, introspect: parts.introspect };
  }

  get cancelKey(): string {
    return this.driver.cancelKey;
  }

  relationKind(rel: Relation): Promise<RelationKind | null> {
    return this.parts.introspect.relationKind(this.driver, rel);
  }

  catalog(schemas: readonly SchemaRef[]): Promise<CatalogEntry[]> {
    return this.parts.introspect.catalog(this.driver, schemas);
  }

  createSchemas(schemas: readonly SchemaRef[]): Promise<void> {
    return createSchemas(this.ctx, schemas);
  }

  async exec(sql: string): Promise<Rows> {
    return { rows: (await this.driver.query(sql)).count };
  }

  fullRefresh(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
    return this.parts.fullRefresh(this.ctx, rel, query, opts);
  }

  view(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
    return this.parts.view(this.ctx, rel, query, opts);
  }

  truncate(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
    return truncateMode(this.ctx, rel, query, opts);
  }

  append(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows> {
    return appendMode(this.ctx, rel, query, opts);
  }

  stage(rel: Relation, query: string, opts: MaterializeOptions): Promise<{ tmp: Relation; rows: number }> {
    return stageQuery(this.ctx, rel, query, opts);
  }

  merge(rel: Relation, tmp: Relation, keys: readonly string[], strategy: MergeStrategy, opts: MergeOptions): Promise<void> {
    return mergeStaged(this.ctx, rel, tmp, keys, strategy, opts);
  }

  dropRelation(rel: Relation, kind: RelationKind, cascade: boolean): Promise<void> {
    return dropRelation(this.ctx, rel, kind, cascade);
  }

  async columnType(rel: Relation, column: string): Promise<string | null> {
    const col = (await this.parts.introspect.columns(this.driver, rel)).find((c) => c.name === column);
    return col?.type ?? null;
  }

  /** Tier B: `MAX("k")` read back as text in the dialect's fixed shape, then formatted as an incremental-condition literal. */
  async maxValue(rel: Relation, column: string): Promise<MaxValue> {
    const columns = await this.parts.introspect.columns(this.driver, rel);
    if (columns.length === 0) throw new SqlError(`relation ${relationText(rel)} does not exist`);
    const col = columns.find((c) => c.name === column);
    if (col === undefined) throw new SqlError(`column "${column}" does not exist in ${relationText(rel)}`);
    const { dialect } = this.parts;
    const category = dialect.valueCategory(col.type);
    const result = await this.driver.query(`SELECT ${dialect.maxTextSql(quoteIdent(column), category)} FROM ${quoteRelation(rel)}`);
    const raw = result.rows[0]?.[0];
    return { literal: formatLiteral(category, raw === null || raw === undefined ? null : String(raw)), dataType: col.type, category };
  }

  async query(sql: string): Promise<QueryResult> {
    const r = await this.driver.query(sql);
    return { count: r.count, columns: r.columns, rows: r.rows, ...(r.numericText ? { numericText: r.numericText } : {}) };
  }

  async countQuery(sql: string): Promise<number> {
    const result = await this.driver.query(sql);
    return toNumber(result.rows[0]?.[0]);
  }

  loadSeed(rel: Relation, source: SeedSource, opts: SeedOptions): Promise<Rows> {
    return this.parts.loadSeed(this.ctx, rel, source, opts);
  }

  cancel(): Promise<void> {
    return this.driver.cancel();
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
