/**
 * The target layer's contract: everything the build
 * needs from a database, so a new target is a new folder implementing this,
 * with no `if (type === …)` anywhere else.
 *
 * A `Target` is one configured connection; it hands out `TargetSession`s, each
 * holding one database connection, and owns the control path used to cancel a
 * session's statement from outside. A session runs one statement at a
 * time: callers must not issue overlapping calls on one session, and for
 * DuckDB all sessions on one database file must be driven by one caller at a
 * time (the DuckDB actor), because the file has a single writer.
 *
 * Every method that materializes fails with an `EngineError` whose chain is
 * the documented message; a cancelled statement fails with
 * code `cancelled` and message `cancelled`, never wrapped.
 *
 * Cancellation is consumed by one failure: a cancel request fails the
 * statement in flight, or, when it lands between two statements, the next
 * one. The operation then stops (cleaning up its temp table and transaction)
 * and the session stays usable, so one long-lived session (the DuckDB actor's)
 * survives cancelling one node.
 */

export type TargetType = 'postgres' | 'duckdb';

/** A table or view; `database` only on targets with catalogs (DuckDB). */
export interface Relation {
  readonly database?: string;
  readonly schema: string;
  readonly name: string;
}

export type RelationKind = 'table' | 'view';

export interface SchemaRef {
  readonly database?: string;
  readonly schema: string;
}

/** Options shared by every model materialization. */
export interface MaterializeOptions {
  /** Node name for messages (`model '<n>'`). */
  readonly modelName: string;
  /** The invocation's run id: names temp tables. */
  readonly runId: string;
  /** Append ` CASCADE` to drops. */
  readonly dropCascade: boolean;
  /** Mode named in `could not materialize model '<n>' (<mode>)`; defaults to the method's mode. */
  readonly mode?: string;
  /**
   * What `rel` is now, when the caller knows (the run read the catalog once,
   * see `TargetSession.catalog`); undefined: the session looks it up.
   */
  readonly existing?: RelationKind | null;
}

/** One table or view of a catalog read: `database` set only on targets with catalogs. */
export interface CatalogEntry extends Relation {
  readonly kind: RelationKind;
}

export type MergeStrategy = 'delete+insert' | 'update+insert' | 'insert';

export interface MergeOptions {
  readonly modelName: string;
}

/** Column types a seed can declare; each dialect names them. */
export type SeedColumnType = 'integer' | 'float' | 'boolean' | 'date' | 'timestamp' | 'timestamptz' | 'text' | 'json';

/**
 * A typed seed table: the structural shape `engine/seeds` produces. Values
 * are text renderings both targets accept for the column type; NULL is null
 * (distinct from the empty string).
 */
export interface SeedTableData {
  readonly columns: readonly { readonly name: string; readonly type: SeedColumnType }[];
  readonly rows: readonly (readonly (string | null)[])[];
}

export type SeedSource =
  | { readonly kind: 'table'; readonly table: SeedTableData }
  | { readonly kind: 'parquet'; /** absolute path */ readonly file: string };

export interface SeedOptions {
  readonly seedName: string;
  readonly runId: string;
  readonly dropCascade: boolean;
}

/** Tier-B probe result: `literal` is ready to splice into SQL, null when the table is empty. */
export interface MaxValue {
  readonly literal: string | null;
  /** The column's type as the database names it (`timestamp with time zone`, `TIMESTAMP`). */
  readonly dataType: string;
  readonly category: ValueCategory;
}

/** How an incremental condition writes a value of a column type. */
export type ValueCategory = 'number' | 'boolean' | 'date' | 'timestamp' | 'timestamptz' | 'string';

export interface Rows {
  readonly rows: number;
}

export interface QueryResult {
  readonly count: number;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** See StatementResult.numericText. */
  readonly numericText?: readonly number[];
}

export interface TargetSession {
  /** Opaque, JSON-safe key for `Target.cancel` from another thread (PostgreSQL backend pid). */
  readonly cancelKey: string;
  /** `table`, `view` or null. */
  relationKind(rel: Relation): Promise<RelationKind | null>;
  /**
   * The tables and views of these schemas, in one query: a run reads them
   * once and tells each model what its relation is (MaterializeOptions.existing).
   */
  catalog(schemas: readonly SchemaRef[]): Promise<CatalogEntry[]>;
  /** `CREATE SCHEMA IF NOT EXISTS`, "already exists" ignored. */
  createSchemas(schemas: readonly SchemaRef[]): Promise<void>;
  /** Runs statement text as written (pre/post statements, hooks); rows = the last statement's count. */
  exec(sql: string): Promise<Rows>;
  /** full-refresh; rows = rows written. */
  fullRefresh(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  /** view; rows = 0. */
  view(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  /** truncate; rows = rows inserted (or created). */
  truncate(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  /** append and snapshot; rows = rows inserted (or created); columns matched by name. */
  append(rel: Relation, query: string, opts: MaterializeOptions): Promise<Rows>;
  /**
   * Stage: `CREATE TABLE TMP AS (Q)`. On success the caller owns `tmp`
   * and must pass it to `merge` (which always drops it) or `dropRelation`.
   */
  stage(rel: Relation, query: string, opts: MaterializeOptions): Promise<{ readonly tmp: Relation; readonly rows: number }>;
  /** Merge in one transaction; drops `tmp` afterwards, success or failure. */
  merge(rel: Relation, tmp: Relation, keys: readonly string[], strategy: MergeStrategy, opts: MergeOptions): Promise<void>;
  /** `DROP TABLE|VIEW IF EXISTS`. */
  dropRelation(rel: Relation, kind: RelationKind, cascade: boolean): Promise<void>;
  /** Tier B `MAX("k")`, formatted; fails when the table or column is missing. */
  maxValue(rel: Relation, column: string): Promise<MaxValue>;
  /** The column's type name, or null when the relation or column does not exist. */
  columnType(rel: Relation, column: string): Promise<string | null>;
  /**
   * One statement as written, with its result: `count` = rows affected (DML)
   * or returned (queries); `rows` as the driver returns them (query jobs).
   */
  query(sql: string): Promise<QueryResult>;
  /** First column of the first row as a number; no rows → 0 (data tests). */
  countQuery(sql: string): Promise<number>;
  /** seed loading; rows = data rows loaded. */
  loadSeed(rel: Relation, source: SeedSource, opts: SeedOptions): Promise<Rows>;
  /** Stops the in-flight statement (or the next one, if none is running); it fails with `cancelled`. */
  cancel(): Promise<void>;
  /** Returns the connection; the session is unusable afterwards. */
  close(): Promise<void>;
}

export interface Target {
  /** The connection name (`<t>` in messages). */
  readonly name: string;
  readonly type: TargetType;
  /** DuckDB is single-writer; the scheduler caps threads to 1. */
  readonly singleWriter: boolean;
  /** The connection's default schema (`target.schema`). */
  readonly defaultSchema: string;
  /** Opens a session; failure is `could not connect to '<t>': <cause>` (code `connection`). */
  open(): Promise<TargetSession>;
  /**
   * Cancels the session with this key like `TargetSession.cancel`
   * when it was opened by this Target; a PostgreSQL key from another process
   * gets a single `pg_cancel_backend`.
   */
  cancel(cancelKey: string): Promise<void>;
  /** Releases pools and control connections; open sessions must be closed first. */
  close(): Promise<void>;
}
