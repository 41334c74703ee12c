/**
 * What one node's execution needs, as plain JSON-safe data: it may cross
 * into a Piscina worker (seeds) or go to the DuckDB actor unchanged. A model
 * carries a render recipe so incremental runs can re-render it with
 * `is_incremental()` true where the work happens, without
 * the whole project: the recipe's `refs` are every node the template text
 * can name (empty unless the model runs incremental).
 */
import type { IndexedNode } from '../compile/node-index.js';
import type { DbtLiveRecipe } from '../project/dbt/live-render.js';
import type { RenderableModel } from '../compile/render-model.js';
import type { DataTest } from '../project/data-tests.js';
import type { IncrementalStyle, ModelConfig } from '../project/model-config.js';
import type { RangeSpec } from '../range-flag.js';
import type { Relation, RelationKind } from '../targets/target.js';
import type { RunCatalog } from './run-catalog.js';

/** A dbt snapshot's settings: how a changed row is told from an unchanged one. */
export interface DbtSnapshotSpec {
  readonly strategy: 'timestamp' | 'check';
  readonly uniqueKey: readonly string[];
  readonly updatedAt?: string;
  /** 'all' or the columns compared by the check strategy. */
  readonly checkCols: 'all' | readonly string[];
  readonly invalidateHardDeletes: boolean;
}

export interface RenderRecipe {
  readonly model: RenderableModel;
  readonly template: string;
  /** Macro files in scope, compiled once per template engine (TemplateEngine.render's `prefix`). */
  readonly prefix: string;
  readonly atRefs: readonly IndexedNode[];
  readonly refs: readonly IndexedNode[];
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: { readonly name: string; readonly type: string; readonly schema: string };
  readonly stepEnv?: Readonly<Record<string, string>>;
}

export interface PlannedTest {
  readonly test: DataTest;
  /** `relationships`: the parent's relation. */
  readonly parent?: Relation;
}

export interface ModelTask {
  readonly kind: 'model';
  readonly name: string;
  /** Full name as plain text (`staging.stg_orders`). */
  readonly table: string;
  readonly relation: Relation;
  /** Resolved mode (`--full-refresh` already applied). */
  readonly mode: string;
  readonly config: ModelConfig;
  readonly style: IncrementalStyle;
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  readonly tests: readonly PlannedTest[];
  readonly recipe: RenderRecipe;
  /** What the relation is at the start of the run, when the run read the catalog (run-catalog.ts); else looked up. */
  readonly existing?: RelationKind | null;
  /** Set for models of a dbt project: how its incremental runs go (engine/build-plan/dbt-incremental.ts). */
  readonly dbt?: DbtModelRun;
  /** A dbt model rendered again, with `execute` true, on the thread that runs it (engine/project/dbt/live-render.ts). */
  readonly live?: DbtLiveRecipe;
}

/** A dbt model's incremental behaviour, rendered at compile time. */
export interface DbtModelRun {
  /** The model rendered with is_incremental() true. */
  readonly incrementalSql?: string;
  readonly strategy: 'append' | 'merge' | 'delete+insert';
  readonly onSchemaChange: 'ignore' | 'append_new_columns' | 'fail';
  /** full_refresh: false pins the model against --full-refresh. */
  readonly fullRefresh?: boolean;
  /** Set for a snapshot: the model runs as SCD2 (engine/build-plan/dbt-snapshot.ts). */
  readonly snapshot?: DbtSnapshotSpec;
}

export type DbtSeedLoad = NonNullable<SeedTask['dbt']>;

export interface SeedTask {
  readonly kind: 'seed';
  readonly name: string;
  readonly table: string;
  readonly relation: Relation;
  readonly file: string;
  readonly format: 'csv' | 'json' | 'parquet';
  /** dbt seeds: delimiter, folded names, declared column types (applied after the load), cascading drops. */
  readonly dbt?: {
    readonly delimiter?: string;
    readonly foldColumns?: boolean;
    readonly columnTypes: Readonly<Record<string, string>>;
    readonly dropCascade: boolean;
  };
}

export interface TestTask {
  readonly kind: 'test';
  readonly name: string;
  readonly table: string;
  readonly relation: Relation;
  readonly tests: readonly PlannedTest[];
  /** A test node (dbt projects): what it tests, as its result lines name it (the record keeps the test's name). */
  readonly on?: string;
  /** A dbt test rendered again, with `execute` true, when it runs (engine/project/dbt/live-render.ts). */
  readonly live?: DbtLiveRecipe;
}

export type NodeTask = ModelTask | SeedTask | TestTask;

/**
 * A model as it crosses to the thread that runs it: without its render
 * recipe unless it runs incremental (the only mode that re-renders there).
 * The recipe carries the template, every macro file in scope and the vars,
 * often 10× the compiled SQL, and a structured clone costs per byte.
 */
export type WireModelTask = Omit<ModelTask, 'recipe'> & { readonly recipe?: RenderRecipe };
export type WireTask = WireModelTask | SeedTask | TestTask;

/**
 * The task to send to a worker: compiled SQL, relation and tests, what the
 * relation is (from the run's catalog read), and the recipe only where it is used.
 */
export function wireTask(task: NodeTask, catalog?: RunCatalog): WireTask {
  if (task.kind !== 'model') return task;
  const existing = catalog?.kindOf(task.relation);
  const known = existing === undefined ? task : { ...task, existing };
  if (task.mode === 'incremental') return known;
  const { recipe: _recipe, ...rest } = known;
  return rest;
}

/** Invocation-wide settings every task of a run shares. */
export interface RunSettings {
  readonly runId: string;
  readonly targetName: string;
  readonly fullRefresh: boolean;
  readonly range?: RangeSpec;
  /** SERVICE_STATE location, if configured. */
  readonly state?: string;
}

export interface NodeOutcome {
  readonly rows: number;
  readonly bytes: number;
  /** Test warnings (severity: warn), in order. */
  readonly warnings: readonly string[];
  /**
   * Set when the model failed after it was written (a data test with
   * severity error): the node's error text. The node is an error, yet its
   * rows still count (a model that fails a data test still reports the rows it wrote).
   */
  readonly failure?: string;
  /** Every data test that ran, in order (a failing one last). */
  readonly tests?: readonly TestResult[];
  /** A dbt model rendered when it ran (live-render.ts): the SQL it ran. */
  readonly compiledSql?: string;
  /** The id of the worker thread that ran the node (debug output shows it). */
  readonly thread?: number;
}

/** One data test's outcome, as `run --json` lists it under `tests`. */
export interface TestResult {
  /** The full name of the model or seed the test belongs to. */
  readonly node: string;
  /** `unique(id)`, `expr(sum(x) > 0)`, … */
  readonly test: string;
  readonly status: 'pass' | 'warn' | 'fail' | 'error';
  /** Violating rows; null when the test query itself failed. */
  readonly violations: number | null;
  readonly severity: 'error' | 'warn';
}
