/**
 * compile: a loaded project → rendered models, the DAG in Kahn order, and
 * the graph the selectors work on. Pure apart from the
 * logger: no database access. Failures come back as
 * `could not compile build project: …`.
 */
import { EngineError } from '../errors.js';
import type { DbtLiveRecipe } from '../project/dbt/live-render.js';
import type { Graph, GraphNode } from '../dag/graph.js';
import { selectNodes, splitSelectors } from '../dag/select.js';
import type { Logger } from '../log.js';
import type { DataTest } from '../project/data-tests.js';
import type { ModelSource, Project, SeedSource } from '../project/load.js';
import type { ModelConfig } from '../project/model-config.js';
import type { NodeName } from '../project/naming.js';
import type { DbtModelRun, DbtSeedLoad } from '../build-plan/node-task.js';
import type { CacheSession } from './cache-session.js';
import { compileModels, lastOrder, modelCache, recordCompile } from './cached-model.js';
import { hashText, signatureText } from './compile-cache.js';
import { buildDag } from './compile-graph.js';
import type { CompileMemo } from './compile-memo.js';
import { macroScopes } from './macros.js';
import { NodeIndex } from './node-index.js';
import type { RenderWorkers } from './parallel-render.js';
import type { RenderEnv } from './render-model.js';
import { lazyEngine, type Renderer } from './renderer.js';

export { graphNode, resolvedMode } from './compile-graph.js';

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

export interface CompileOptions {
  readonly logger: Logger;
  readonly targetName: string;
  readonly targetType: TargetType;
  readonly stepEnv?: Readonly<Record<string, string>>;
  /** `--full-refresh`: every selected model's resolved mode is full-refresh. */
  readonly fullRefresh?: boolean;
  /** DuckDB: the target database's catalog name (qualifies names that would be ambiguous). */
  readonly catalog?: string;
  /** The model pipeline and templating engine, asked for when a model must be rendered (renderer.ts). */
  readonly renderer: () => Renderer;
  /** The compile cache (cache-session.ts), opened before the project was loaded; omitted: none. The caller ends the session (`finish`). */
  readonly cache?: CacheSession;
  /** Render workers started while the project loaded (parallel-render.ts): used or stopped by this compile. */
  readonly workers?: RenderWorkers;
}

/**
 * On DuckDB, `x.t` is ambiguous — and an error — when the database file is
 * `x.duckdb` and a schema is named `x` too: such names get the catalog
 * (`x.x.t`) in DDL and in rendered SQL. Their prod name (what references and
 * selectors match) does not change.
 */
export function qualifyForCatalog(n: NodeName, catalog: string | undefined): NodeName {
  if (catalog === undefined || n.database !== undefined || n.schema.toLowerCase() !== catalog.toLowerCase()) return n;
  return { ...n, database: catalog, fullName: `${catalog}.${n.fullName}` };
}

/** The project with catalog-qualified names; a source whose name does not change stays the same object (compile-memo.ts). */
function withCatalog(project: Project, catalog: string | undefined, memo: CompileMemo | undefined): Project {
  if (catalog === undefined) return project;
  const qualified = <T extends ModelSource | SeedSource>(s: T): T => {
    const naming = qualifyForCatalog(s.naming, catalog);
    if (naming === s.naming) return s;
    const made = memo?.withCatalog.get(s);
    if (made !== undefined && made.catalog === catalog) return made.source as T;
    const q = { ...s, naming };
    memo?.withCatalog.set(s, { catalog, source: q });
    return q;
  };
  return { ...project, models: project.models.map(qualified), seeds: project.seeds.map(qualified) };
}

/** The node index of the project's models and seeds, with the hash of every node's identity; the same sources give the last one. */
function nodeIndex(project: Project, memo: CompileMemo | undefined, hashed: boolean): { index: NodeIndex; hash: string } {
  const prev = memo?.index;
  if (prev !== undefined && sameNodes(prev.models, project.models) && sameNodes(prev.seeds, project.seeds)) {
    if (memo) memo.index = { ...prev, models: project.models, seeds: project.seeds };
    return prev;
  }
  const index = new NodeIndex([
    ...project.models.map((m) => ({ name: m.name, kind: 'model' as const, file: m.file, naming: m.naming })),
    ...project.seeds.map((s) => ({ name: s.name, kind: 'seed' as const, file: s.file, naming: s.naming })),
  ]);
  let nodes = '';
  if (hashed) {
    // Every node's signature and file (no signature string kept per node: nodeSignature is for lookups).
    for (const n of index.all) nodes += `${signatureText(n)}\u0002${n.file}\u0003`;
  }
  const made = { index, hash: hashed ? hashText(nodes) : '' };
  if (memo) memo.index = { models: project.models, seeds: project.seeds, ...made };
  return made;
}

/** The same nodes as far as the index can tell: each the same object, or one with the same name, file and naming. */
function sameNodes(a: readonly (ModelSource | SeedSource)[], b: readonly (ModelSource | SeedSource)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const m = x.naming;
    const n = y.naming;
    if (x.name !== y.name || x.file !== y.file || m.database !== n.database || m.schema !== n.schema || m.name !== n.name || m.prodName !== n.prodName || m.fullName !== n.fullName) return false;
  }
  return true;
}

export function compileProject(project: Project, opts: CompileOptions): CompiledProject {
  try {
    return compileInner(project, opts);
  } catch (err) {
    throw EngineError.wrap('could not compile build project', err, 'compile');
  }
}

function compileInner(loaded: Project, opts: CompileOptions): CompiledProject {
  const memo = opts.cache?.memo;
  const project = withCatalog(loaded, opts.catalog, memo);
  const { index, hash } = nodeIndex(project, memo, opts.cache !== undefined);
  const env: RenderEnv = {
    engine: lazyEngine(opts.renderer),
    index,
    macros: macroScopes(project.macros, opts.logger),
    vars: project.settings.vars,
    target: { name: opts.targetName, type: opts.targetType, schema: project.settings.naming === 'dev' ? project.settings.devSchema! : 'public' },
    logger: opts.logger,
    stepEnv: opts.stepEnv,
  };
  let models: CompiledModel[];
  const cache = opts.cache ? modelCache(opts.cache, env, opts, project, hash) : undefined;
  try {
    models = compileModels(env, project.models, cache, opts.renderer, opts.workers);
  } catch (err) {
    throw EngineError.wrap('could not compile models', err, 'compile');
  }
  if (cache) {
    const shown = cache.rendered.slice(0, 50).join(', ') + (cache.rendered.length > 50 ? ', …' : '');
    opts.logger.log('debug', `compile cache: ${models.length - cache.rendered.length} of ${models.length} models from cache${cache.rendered.length > 0 ? `; rendered: ${shown}` : ''}`);
  }
  const known = cache ? lastOrder(cache, project) : undefined;
  const dag = buildDag(models, project.seeds, { targetType: opts.targetType, fullRefresh: opts.fullRefresh === true, ...(known ? { order: known } : {}), ...(memo ? { memo } : {}) });
  if (cache) recordCompile(cache, dag.order);
  return { project, nodes: dag.nodes, graph: dag.graph, target: { name: opts.targetName, type: opts.targetType }, env };
}

/** Selected nodes in DAG order, with the `could not apply selectors` stage prefix on errors. */
export function selectCompiled(cp: CompiledProject, include: readonly string[], exclude: readonly string[]): CompiledNode[] {
  // No selector: every node, without the graph (compile-graph.ts makes its nodes on first use).
  if (splitSelectors(include).length === 0 && splitSelectors(exclude).length === 0) return [...cp.nodes];
  let picked: GraphNode[];
  try {
    picked = selectNodes(cp.graph, include, exclude);
  } catch (err) {
    throw EngineError.wrap('could not compile build project', EngineError.wrap('could not apply selectors', err, 'select'), 'select');
  }
  // graph.nodes are cp.nodes' graph nodes in the same order: all of them picked is all nodes.
  if (picked.length === cp.nodes.length) return [...cp.nodes];
  const byName = new Map(cp.nodes.map((n) => [n.name.toLowerCase(), n]));
  return picked.map((g) => byName.get(g.name.toLowerCase())!);
}
