/**
 * What a compile produces (compile.ts): the compiled nodes and project. Kept
 * apart from the compile's code so the modules it uses (the cache, the
 * renderers, the graph) read these types without importing compile.ts.
 */
import type { Graph } from '../dag/graph.js';
import type { DataTest } from '../project/data-tests.js';
import type { ModelSource, Project, SeedSource } from '../project/load.js';
import type { ModelConfig } from '../project/model-config.js';
import type { NodeName } from '../project/naming.js';
import type { DbtModelRun, DbtSeedLoad } from '../build-plan/node-task.js';
import type { DbtLiveRecipe } from '../project/dbt/live-render.js';
import type { RenderEnv } from './render-model.js';

export type TargetType = 'postgres' | 'duckdb' | '';

export interface CompiledModel {
  readonly kind: 'model';
  readonly name: string;
  readonly source: ModelSource;
  /** Effective config (defaults, front-matter, config()). */
  readonly config: ModelConfig;
  readonly tests: readonly DataTest[];
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  /** Original-case names of every dependency, sorted (code point). */
  readonly dependencies: readonly string[];
  /** Template text ready for a re-render at run time. */
  readonly template: string;
  /** The macro files in scope, rendered before `template` (see PreparedTemplate). */
  readonly templatePrefix: string;
  /** dbt projects: incremental strategy and the is_incremental() rendering. */
  readonly dbt?: DbtModelRun;
  /** dbt projects: a model whose render asks the database renders again when it runs (engine/project/dbt/live-render.ts). */
  readonly live?: DbtLiveRecipe;
}

export interface CompiledSeed {
  readonly kind: 'seed';
  readonly name: string;
  readonly source: SeedSource;
  readonly dependencies: readonly string[];
  readonly dbt?: DbtSeedLoad;
}

/** Where a test node comes from: a properties file entry or a singular test file. */
export interface TestSource {
  readonly kind: 'test';
  readonly name: string;
  readonly file: string;
  readonly rel: string;
  /** The tested relation's name (singular tests: the test's own name in the public schema). */
  readonly naming: NodeName;
  readonly tags: readonly string[];
}

/** A test as its own node (dbt projects): one query, one result, after the nodes it reads. */
export interface CompiledTest {
  readonly kind: 'test';
  readonly name: string;
  readonly source: TestSource;
  readonly dependencies: readonly string[];
  readonly test: DataTest;
  /** A source freshness check (`build test --freshness`), not a data test. */
  readonly freshness?: boolean;
  /** A test whose render asks the database renders again when it runs (engine/project/dbt/live-render.ts). */
  readonly live?: DbtLiveRecipe;
}

export type CompiledNode = CompiledModel | CompiledSeed | CompiledTest;

export interface CompiledProject {
  readonly project: Project;
  /** Enabled nodes in DAG order. */
  readonly nodes: readonly CompiledNode[];
  readonly graph: Graph;
  readonly target: { readonly name: string; readonly type: TargetType };
  /** Renders models again (incremental runs) with the same names, vars and macros. */
  readonly env: RenderEnv;
}
