/**
 * compile: a loaded project → rendered models, the DAG in Kahn order, and
 * the graph the selectors work on. Pure apart from the
 * logger: no database access. Failures come back as
 * `could not compile build project: …`.
 */
import { EngineError } from '../errors.js';
import type { Graph, GraphNode } from '../dag/graph.js';
import { topoOrder } from '../dag/order.js';
import { selectNodes } from '../dag/select.js';
import type { Logger } from '../log.js';
import type { DataTest } from '../project/data-tests.js';
import type { ModelSource, Project, SeedSource } from '../project/load.js';
import type { ModelConfig } from '../project/model-config.js';
import type { NodeName } from '../project/naming.js';
import type { DbtModelRun, DbtSeedLoad } from '../build-plan/node-task.js';
import { suggestions } from '../suggest.js';
import { createNunjucksEngine } from '../template/nunjucks-engine.js';
import type { CacheSession } from './cache-session.js';
import { compilerCodeStamp, entryKey, hashText, nodeSignature, type CacheEntry, type LastCompile, type Lookup } from './compile-cache.js';
import { lookupVar } from '../home-env.js';
import type { Level } from '../log.js';
import { macroScopes } from './macros.js';
import { NodeIndex, type IndexedNode, type NodeLookup } from './node-index.js';
import { DEFAULT_INCREMENTAL, prepareTemplate, renderModel, type RenderEnv } from './render-model.js';

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
  /** The compile cache (cache-session.ts), opened before the project was loaded; omitted: none. The caller ends the session (`finish`). */
  readonly cache?: CacheSession;
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

function withCatalog(project: Project, catalog: string | undefined): Project {
  if (catalog === undefined) return project;
  return {
    ...project,
    models: project.models.map((m) => ({ ...m, naming: qualifyForCatalog(m.naming, catalog) })),
    seeds: project.seeds.map((s) => ({ ...s, naming: qualifyForCatalog(s.naming, catalog) })),
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const lower = (name: string) => name.toLowerCase();

export function compileProject(project: Project, opts: CompileOptions): CompiledProject {
  try {
    return compileInner(project, opts);
  } catch (err) {
    throw EngineError.wrap('could not compile build project', err, 'compile');
  }
}

function compileInner(loaded: Project, opts: CompileOptions): CompiledProject {
  const project = withCatalog(loaded, opts.catalog);
  const index = new NodeIndex([
    ...project.models.map((m) => ({ name: m.name, kind: 'model' as const, file: m.file, naming: m.naming })),
    ...project.seeds.map((s) => ({ name: s.name, kind: 'seed' as const, file: s.file, naming: s.naming })),
  ]);
  const env: RenderEnv = {
    engine: createNunjucksEngine(),
    index,
    macros: macroScopes(project.macros, opts.logger),
    vars: project.settings.vars,
    target: { name: opts.targetName, type: opts.targetType, schema: project.settings.naming === 'dev' ? project.settings.devSchema! : 'public' },
    logger: opts.logger,
    stepEnv: opts.stepEnv,
  };
  const byKey = new Map<string, CompiledNode>();
  const deps = new Map<string, string[]>();
  const disabled = new Set<string>();
  const models: CompiledModel[] = [];
  const cache = opts.cache ? modelCache(opts.cache, env, opts, project) : undefined;
  try {
    for (const m of project.models) models.push(cache ? cachedModel(env, m, cache) : compileModel(env, m));
  } catch (err) {
    throw EngineError.wrap('could not compile models', err, 'compile');
  }
  if (cache) {
    const shown = cache.rendered.slice(0, 50).join(', ') + (cache.rendered.length > 50 ? ', …' : '');
    opts.logger.log('debug', `compile cache: ${models.length - cache.rendered.length} of ${models.length} models from cache${cache.rendered.length > 0 ? `; rendered: ${shown}` : ''}`);
  }
  const keys = models.map((c) => c.name.toLowerCase());
  models.forEach((c, i) => {
    if (!c.config.enabled) disabled.add(keys[i]!);
  });
  models.forEach((c, i) => {
    if (disabled.has(keys[i]!)) return;
    checkTargetLimits(c.name, 'model', c.source.naming, opts.targetType);
    byKey.set(keys[i]!, c);
  });
  for (const s of project.seeds) {
    checkTargetLimits(s.name, 'seed', s.naming, opts.targetType);
    byKey.set(s.name.toLowerCase(), { kind: 'seed', name: s.name, source: s, dependencies: [] });
  }
  if (disabled.size > 0) models.forEach((c, i) => !disabled.has(keys[i]!) && byKey.set(keys[i]!, withoutDisabledDeps(c, disabled)));
  for (const [k, n] of byKey) deps.set(k, n.dependencies.map(lower));
  let order = cache ? lastOrder(cache, project) : undefined;
  if (order === undefined) {
    try {
      order = topoOrder([...byKey.values()].map((n) => n.name), deps);
    } catch (err) {
      throw EngineError.wrap('could not build dependency graph', err, 'compile');
    }
  }
  if (cache) {
    // The same order from the last compile means the same variant, nodes and entries; with the same macros it is the same compile.
    const same = cache.last !== undefined && order === cache.last.order && sameMap(cache.prefixes, cache.last.prefixes);
    cache.session.recordCompile(same ? cache.last! : { variant: cache.variant, entries: cache.entries, prefixes: cache.prefixes, index: cache.index, order });
  }
  const nodes = order.map((name) => byKey.get(name.toLowerCase())!);
  const graph: Graph = { nodes: nodes.map((n) => graphNode(n, opts.fullRefresh === true)), deps, disabled };
  return { project, nodes, graph, target: { name: opts.targetName, type: opts.targetType }, env };
}

function compileModel(projectEnv: RenderEnv, m: ModelSource): CompiledModel {
  // A merged sub-project's model renders with its own vars.
  const env = m.vars ? { ...projectEnv, vars: m.vars } : projectEnv;
  const prepared = prepareTemplate(env, m);
  const r = renderModel(env, m, prepared, DEFAULT_INCREMENTAL);
  const depNames = new Set([...r.deps].map((k) => env.index.resolve(k)!.name));
  // relationships tests add an edge parent -> child.
  for (const [i, t] of m.tests.entries()) {
    if (t.kind !== 'relationships') continue;
    const parent = env.index.resolve(t.to);
    if (!parent) {
      const hint = suggestions(t.to, env.index.all.map((n) => ({ name: n.name, file: n.file })));
      throw new EngineError('compile', `model '${m.name}' test ${i + 1}: relationships.to: ref('${t.to}') not found.${hint}`);
    }
    if (parent.name.toLowerCase() !== m.name.toLowerCase()) depNames.add(parent.name);
  }
  return {
    kind: 'model',
    name: m.name,
    source: m,
    config: r.config,
    tests: m.tests,
    sql: r.sql,
    pre: r.pre,
    post: r.post,
    dependencies: [...depNames].sort(cmp),
    template: prepared.source,
    templatePrefix: prepared.prefix,
  };
}

interface ModelCache {
  readonly session: CacheSession;
  /** Target and project-wide inputs, code stamp: part of every entry's key. */
  readonly globalKey: string;
  /** The global key and everything a model's loaded form depends on besides its file (LastCompile.variant). */
  readonly variant: string;
  /** Hash of every node's identity (LastCompile.index). */
  readonly index: string;
  /** The cache's last compile, when it was of this variant. */
  readonly last: LastCompile | undefined;
  /** The last compile's nodes were these: an entry's node lookups need no check. */
  readonly sameIndex: boolean;
  /** Macro prefix text → its hash. */
  readonly prefixHashes: Map<string, string>;
  /** This compile, for the next one (LastCompile). */
  readonly entries: Map<string, string>;
  readonly prefixes: Map<string, string>;
  /** Names of the models rendered (not taken from the cache), in project order. */
  readonly rendered: string[];
}

function modelCache(session: CacheSession, env: RenderEnv, opts: CompileOptions, project: Project): ModelCache {
  const globalKey = JSON.stringify([compilerCodeStamp(), env.target, opts.catalog ?? null, env.vars]);
  const variant = hashText(`${globalKey}\u0000${project.loadKey ?? ''}`);
  let nodes = '';
  for (const n of env.index.all) nodes += `${nodeSignature(n)}\u0002${n.file}\u0003`;
  const index = hashText(nodes);
  const last = session.lastCompile(variant);
  return { session, globalKey, variant, index, last, sameIndex: last?.index === index, prefixHashes: new Map(), entries: new Map(), prefixes: new Map(), rendered: [] };
}

const signatureOf = (n: IndexedNode | undefined) => (n === undefined ? null : nodeSignature(n));

/** Whether every lookup the entry's render made still gets the same answer; `nodes`: check node lookups too, not only env vars. */
function stillValid(env: RenderEnv, e: CacheEntry, nodes = true): boolean {
  if (!nodes && !e.readsEnv) return true;
  for (const [kind, query, answer] of e.lookups) {
    if (kind !== 'e' && !nodes) continue;
    const now = kind === 'r' ? signatureOf(env.index.resolve(query)) : kind === 'f' ? signatureOf(env.index.fullNameMatch(query)) : (lookupVar(query, env.stepEnv) ?? null);
    if (now !== answer) return false;
  }
  return true;
}

function fromEntry(m: ModelSource, hit: CacheEntry, prefix: string): CompiledModel {
  return { kind: 'model', name: m.name, source: m, config: hit.config ?? m.config, tests: m.tests, sql: hit.sql, pre: hit.pre, post: hit.post, dependencies: hit.dependencies, template: hit.template ?? m.body, templatePrefix: prefix };
}

/**
 * A model from the cache when its inputs and lookups are unchanged, else
 * rendered (and recorded for the next compile). A file unchanged since the
 * last compile of this variant takes that compile's entry without hashing
 * its inputs.
 */
function cachedModel(env: RenderEnv, m: ModelSource, cache: ModelCache): CompiledModel {
  const dir = dirOf(m.rel);
  const prefix = env.macros.prefixFor(dir);
  let prefixHash = cache.prefixHashes.get(prefix);
  if (prefixHash === undefined) {
    prefixHash = hashText(prefix);
    cache.prefixHashes.set(prefix, prefixHash);
  }
  cache.prefixes.set(dir, prefixHash);
  const last = cache.last;
  if (last !== undefined && cache.session.isUnchanged(m.abs) && last.prefixes.get(dir) === prefixHash) {
    const key = last.entries.get(m.abs);
    const hit = key === undefined ? undefined : cache.session.model(key);
    if (hit !== undefined && stillValid(env, hit, !cache.sameIndex)) return reuse(env, m, cache, key!, hit, prefix);
  }
  const key = entryKey(`${cache.globalKey}\u0000${prefixHash}\u0000${JSON.stringify([m.name, m.rel, m.body, m.config, m.hasFrontMatter, m.naming, m.tests, m.vars ?? null])}`);
  const hit = cache.session.model(key);
  if (hit !== undefined && stillValid(env, hit)) return reuse(env, m, cache, key, hit, prefix);
  cache.rendered.push(m.name);
  const lookups: Lookup[] = [];
  const logs: [Level, string][] = [];
  let cacheable = true;
  const index: NodeLookup = {
    get all() {
      cacheable = false; // only error paths list every node
      return env.index.all;
    },
    resolve(text) {
      const n = env.index.resolve(text);
      lookups.push(['r', text, signatureOf(n)]);
      return n;
    },
    fullNameMatch(text) {
      const n = env.index.fullNameMatch(text);
      lookups.push(['f', text, signatureOf(n)]);
      return n;
    },
  };
  const recording: RenderEnv = {
    ...env,
    index,
    logger: {
      log(level, message) {
        logs.push([level, message]);
        env.logger.log(level, message);
      },
      enabled: (level) => env.logger.enabled(level),
    },
    envVar(name) {
      const v = lookupVar(name, env.stepEnv);
      lookups.push(['e', name, v ?? null]);
      return v;
    },
  };
  const c = compileModel(recording, m);
  if (cacheable) {
    const sameConfig = c.config === m.config || JSON.stringify(c.config) === JSON.stringify(m.config);
    const entry: CacheEntry = { sql: c.sql, pre: c.pre, post: c.post, config: sameConfig ? null : c.config, dependencies: c.dependencies, template: c.template === m.body ? null : c.template, lookups: dedupe(lookups), readsEnv: lookups.some((l) => l[0] === 'e'), logs };
    cache.session.keepModel(key, entry, true);
    cache.entries.set(m.abs, key);
  }
  return c;
}

/**
 * The last compile's DAG order when this compile has the same nodes and every
 * model the same entry (so the same dependencies and enabled flags): the
 * order is a function of those alone.
 */
function lastOrder(cache: ModelCache, project: Project): readonly string[] | undefined {
  const last = cache.last;
  if (last?.order === undefined || !cache.sameIndex || cache.entries.size !== project.models.length || last.entries.size !== cache.entries.size) return undefined;
  for (const [abs, key] of cache.entries) if (last.entries.get(abs) !== key) return undefined;
  return last.order;
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function reuse(env: RenderEnv, m: ModelSource, cache: ModelCache, key: string, hit: CacheEntry, prefix: string): CompiledModel {
  for (const [level, message] of hit.logs) env.logger.log(level, message);
  cache.session.keepModel(key, hit, false);
  cache.entries.set(m.abs, key);
  return fromEntry(m, hit, prefix);
}

function dedupe(lookups: readonly Lookup[]): Lookup[] {
  const seen = new Set<string>();
  return lookups.filter((l) => {
    const k = `${l[0]}\u0000${l[1]}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const dirOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

/** Edges to disabled models vanish. */
function withoutDisabledDeps(c: CompiledModel, disabled: ReadonlySet<string>): CompiledModel {
  if (!c.dependencies.some((d) => disabled.has(d.toLowerCase()))) return c;
  return { ...c, dependencies: c.dependencies.filter((d) => !disabled.has(d.toLowerCase())) };
}

function checkTargetLimits(name: string, kind: 'model' | 'seed', n: { database?: string; schema: string; name: string }, type: TargetType): void {
  if (type !== 'postgres') return;
  if (n.database) throw new EngineError('compile', `${kind} '${name}': database '${n.database}' is set but postgres does not support database.schema.table names`);
  for (const part of [n.schema, n.name]) {
    if (Buffer.byteLength(part, 'utf8') > 63) throw new EngineError('compile', `${kind} '${name}': identifier '${part}' exceeds 63 bytes`);
  }
}

/** Resolved mode as list/compile/results show it. */
export function resolvedMode(n: CompiledNode, fullRefresh: boolean): string {
  if (n.kind === 'seed') return 'full-refresh';
  if (n.kind === 'test') return 'test';
  if (n.dbt?.snapshot) return 'snapshot';
  if (n.dbt?.fullRefresh === false) return n.config.mode;
  return fullRefresh ? 'full-refresh' : n.config.mode;
}

export function graphNode(n: CompiledNode, fullRefresh: boolean): GraphNode {
  const s = n.source;
  const config: Record<string, unknown> = n.kind === 'model' ? { ...n.config, mode: resolvedMode(n, fullRefresh), materialized: resolvedMode(n, fullRefresh) } : {};
  return {
    name: n.name,
    kind: n.kind,
    prodName: s.naming.prodName,
    fullName: s.naming.fullName,
    file: s.file,
    discoveryPath: s.rel,
    tags: n.kind === 'model' ? n.config.tags : n.kind === 'test' ? n.source.tags : [],
    config,
  };
}

/** Selected nodes in DAG order, with the `could not apply selectors` stage prefix on errors. */
export function selectCompiled(cp: CompiledProject, include: readonly string[], exclude: readonly string[]): CompiledNode[] {
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
