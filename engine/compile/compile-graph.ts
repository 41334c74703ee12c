/**
 * The DAG of compiled models and seeds: disabled models and the edges to them
 * dropped, target limits checked, Kahn order (dag/order.ts), and the graph
 * the selectors work on. With this process's last compile of the directory
 * (compile-memo.ts) the same models give the same nodes and graph, and
 * models whose names, dependencies and enabled flags did not change keep the
 * last order; per node, the lower-cased dependencies and the graph node are
 * made once.
 */
import { EngineError } from '../errors.js';
import type { Graph, GraphNode } from '../dag/graph.js';
import { topoOrder } from '../dag/order.js';
import type { SeedSource } from '../project/load.js';
import type { CompiledModel, CompiledNode, CompiledSeed, TargetType } from './compiled.js';
import type { CompileMemo, GraphMemo } from './compile-memo.js';

export interface Dag {
  readonly order: readonly string[];
  readonly nodes: readonly CompiledNode[];
  readonly graph: Graph;
}

export interface DagOptions {
  readonly targetType: TargetType;
  readonly fullRefresh: boolean;
  /** An order known to be right (the cache's last compile of the same nodes and entries). */
  readonly order?: readonly string[];
  readonly memo?: CompileMemo;
}

const lower = (name: string) => name.toLowerCase();

export function buildDag(models: readonly CompiledModel[], seeds: readonly SeedSource[], opts: DagOptions): Dag {
  const memo = opts.memo;
  const prev = memo?.graph;
  if (prev !== undefined && prev.fullRefresh === opts.fullRefresh && prev.targetType === opts.targetType) {
    if (sameItems(prev.models, models) && sameItems(prev.seeds, seeds)) return prev;
    const patched = patch(prev, models, seeds, opts, memo!);
    if (patched !== undefined) return patched;
  }
  const byKey = new Map<string, CompiledNode>();
  const disabled = new Set<string>();
  const keys = models.map((c) => c.name.toLowerCase());
  models.forEach((c, i) => {
    if (!c.config.enabled) disabled.add(keys[i]!);
  });
  models.forEach((c, i) => {
    if (disabled.has(keys[i]!)) return;
    checkTargetLimits(c.name, 'model', c.source.naming, opts.targetType);
    byKey.set(keys[i]!, c);
  });
  for (const s of seeds) {
    checkTargetLimits(s.name, 'seed', s.naming, opts.targetType);
    byKey.set(s.name.toLowerCase(), seedNode(s, memo));
  }
  if (disabled.size > 0) models.forEach((c, i) => !disabled.has(keys[i]!) && byKey.set(keys[i]!, withoutDisabledDeps(c, disabled)));
  const edges = () => {
    const deps = new Map<string, readonly string[]>();
    for (const [k, n] of byKey) deps.set(k, lowerDeps(n, memo));
    return deps;
  };
  let order = opts.order ?? (prev !== undefined && sameShape(prev, models, seeds, memo) ? prev.order : undefined);
  let deps: ReadonlyMap<string, readonly string[]> | undefined;
  if (order === undefined) {
    deps = edges();
    try {
      order = topoOrder([...byKey.values()].map((n) => n.name), deps);
    } catch (err) {
      throw EngineError.wrap('could not build dependency graph', err, 'compile');
    }
  }
  const nodes = order.map((name) => byKey.get(name.toLowerCase())!);
  const graph = lazyGraph(nodes, deps ? () => deps : edges, disabled, opts.fullRefresh, memo);
  const dag = { order, nodes, graph };
  if (memo) memo.graph = { ...dag, models, seeds, fullRefresh: opts.fullRefresh, targetType: opts.targetType, at: positions(nodes) };
  return dag;
}

const positions = (nodes: readonly CompiledNode[]) => new Map(nodes.map((n, i) => [n.name.toLowerCase(), i]));

/**
 * The graph, its nodes and edges made on first use: `compile` and `list`
 * without selectors read neither (10,000 graph nodes and edge lists were
 * ≈10 % of a compile from the cache); selectors, runs and lineage do.
 */
function lazyGraph(nodes: readonly CompiledNode[], edges: () => ReadonlyMap<string, readonly string[]>, disabled: ReadonlySet<string>, fullRefresh: boolean, memo: CompileMemo | undefined): Graph {
  let graphNodes: readonly GraphNode[] | undefined;
  let deps: ReadonlyMap<string, readonly string[]> | undefined;
  return {
    get nodes() {
      return (graphNodes ??= nodes.map((n) => graphNodeOf(n, fullRefresh, memo)));
    },
    get deps() {
      return (deps ??= edges());
    },
    disabled,
  };
}

/**
 * The last DAG with the models that changed put in their places — when no
 * model is disabled and every changed model kept its name, enabled flag and
 * dependencies (then order, edges and the other nodes are the same).
 */
function patch(prev: GraphMemo, models: readonly CompiledModel[], seeds: readonly SeedSource[], opts: DagOptions, memo: CompileMemo): GraphMemo | undefined {
  if (prev.graph.disabled.size > 0 || !sameItems(prev.seeds, seeds) || prev.models.length !== models.length) return undefined;
  let nodes: CompiledNode[] | undefined;
  for (let i = 0; i < models.length; i++) {
    const a = prev.models[i]!;
    const b = models[i]!;
    if (a === b) continue;
    if (a.name !== b.name || !b.config.enabled || !sameItems(lowerDeps(a, memo), lowerDeps(b, memo))) return undefined;
    checkTargetLimits(b.name, 'model', b.source.naming, opts.targetType);
    nodes ??= [...prev.nodes];
    nodes[prev.at.get(b.name.toLowerCase())!] = b;
  }
  if (nodes === undefined) return undefined;
  // Same names and edges: the last edge map itself (taken now, so no graph holds on to the one before it);
  // the graph nodes of unchanged models come from the memo.
  const deps = prev.graph.deps;
  const made: GraphMemo = { ...prev, models, nodes, graph: lazyGraph(nodes, () => deps, prev.graph.disabled, opts.fullRefresh, memo) };
  memo.graph = made;
  return made;
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Same names in the same order, and every changed model with the same dependencies and enabled flag: the same order. */
function sameShape(prev: NonNullable<CompileMemo['graph']>, models: readonly CompiledModel[], seeds: readonly SeedSource[], memo: CompileMemo | undefined): boolean {
  if (prev.models.length !== models.length || prev.seeds.length !== seeds.length) return false;
  for (let i = 0; i < seeds.length; i++) if (prev.seeds[i]!.name !== seeds[i]!.name) return false;
  for (let i = 0; i < models.length; i++) {
    const a = prev.models[i]!;
    const b = models[i]!;
    if (a === b) continue;
    if (a.name !== b.name || a.config.enabled !== b.config.enabled || !sameItems(lowerDeps(a, memo), lowerDeps(b, memo))) return false;
  }
  return true;
}

function lowerDeps(n: CompiledNode, memo: CompileMemo | undefined): readonly string[] {
  let d = memo?.lowerDeps.get(n);
  if (d === undefined) {
    // Names are mostly lower-case already: then the list itself.
    d = n.dependencies.every((x) => x === x.toLowerCase()) ? n.dependencies : n.dependencies.map(lower);
    memo?.lowerDeps.set(n, d);
  }
  return d;
}

function seedNode(s: SeedSource, memo: CompileMemo | undefined): CompiledSeed {
  let n = memo?.seedNodes.get(s);
  if (n === undefined) {
    n = { kind: 'seed', name: s.name, source: s, dependencies: [] };
    memo?.seedNodes.set(s, n);
  }
  return n;
}

function graphNodeOf(n: CompiledNode, fullRefresh: boolean, memo: CompileMemo | undefined): GraphNode {
  const made = memo?.graphNodes[fullRefresh ? 1 : 0];
  let g = made?.get(n);
  if (g === undefined) {
    g = graphNode(n, fullRefresh);
    made?.set(n, g);
  }
  return g;
}

/** Edges to disabled models vanish. */
function withoutDisabledDeps(c: CompiledModel, disabled: ReadonlySet<string>): CompiledModel {
  if (!c.dependencies.some((d) => disabled.has(d.toLowerCase()))) return c;
  return { ...c, dependencies: c.dependencies.filter((d) => !disabled.has(d.toLowerCase())) };
}

function checkTargetLimits(name: string, kind: 'model' | 'seed', n: { database?: string; schema: string; name: string }, type: TargetType): void {
  if (type !== 'postgres') return;
  if (n.database) throw new EngineError('compile', `${kind} '${name}': database '${n.database}' is set but postgres does not support database.schema.table names`);
  for (const part of [n.schema, n.name]) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: only a name longer than 21 units can exceed 63 bytes.
    if (part.length > 21 && Buffer.byteLength(part, 'utf8') > 63) throw new EngineError('compile', `${kind} '${name}': identifier '${part}' exceeds 63 bytes`);
  }
}

/** Resolved mode as list/compile/results show it. */
export function resolvedMode(n: CompiledNode, fullRefresh: boolean): string {
  if (n.kind === 'seed') return 'full-refresh';
  if (n.kind === 'test') return 'test';
  if (n.dbt?.snapshot) return 'snapshot';
  if (n.dbt?.fullRefresh === false) return n.config.mode;
  // dbt's --full-refresh rebuilds tables and incremental models; a view stays a view. Our own
  // format rebuilds every selected model as a table (docs/build-projects.md).
  if (n.kind === 'model' && n.source.dbtProject === true && n.config.mode === 'view') return 'view';
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
