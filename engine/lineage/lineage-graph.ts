/**
 * The lineage of a build project: its compiled nodes (models and seeds) and
 * the dependency edges between them, as plain data. `withStatuses` lays a
 * run's results over it (the web console colours nodes by their last run).
 */
import type { CompiledProject } from '../compile/compile.js';

export type LineageStatus = 'success' | 'error' | 'skipped';

export interface LineageNode {
  /** File stem, original case: what `ref()` and selectors name. */
  readonly name: string;
  readonly kind: 'model' | 'seed';
  /** The full name in this naming mode (what run results name). */
  readonly fullName: string;
  readonly file: string;
  /** Resolved mode of a model (`table`, `view`, `incremental`, …); `seed` for seeds. */
  readonly mode: string;
  readonly status?: LineageStatus;
}

export interface LineageEdge {
  /** The dependency. */
  readonly from: string;
  /** The node that depends on it. */
  readonly to: string;
}

export interface LineageGraph {
  readonly nodes: readonly LineageNode[];
  readonly edges: readonly LineageEdge[];
}

export function lineageGraph(cp: CompiledProject): LineageGraph {
  // Data tests of a dbt project are DAG nodes too; the picture shows relations (as dbt's docs do) and a node's page lists its tests.
  const drawn = cp.graph.nodes.filter((n): n is typeof n & { kind: 'model' | 'seed' } => n.kind !== 'test');
  const byKey = new Map(drawn.map((n) => [n.name.toLowerCase(), n]));
  const nodes: LineageNode[] = drawn.map((n) => ({
    name: n.name,
    kind: n.kind,
    fullName: n.fullName,
    file: n.file,
    mode: n.kind === 'seed' ? 'seed' : String(n.config.mode ?? ''),
  }));
  const edges: LineageEdge[] = [];
  for (const n of drawn) {
    for (const d of cp.graph.deps.get(n.name.toLowerCase()) ?? []) {
      const dep = byKey.get(d);
      if (dep) edges.push({ from: dep.name, to: n.name });
    }
  }
  return { nodes, edges };
}

/** Each node's status from run results (`{name, status}` with full or short names); nodes absent from them keep none. */
export function withStatuses(g: LineageGraph, results: ReadonlyMap<string, LineageStatus>): LineageGraph {
  return {
    edges: g.edges,
    nodes: g.nodes.map((n) => {
      const s = results.get(n.fullName.toLowerCase()) ?? results.get(n.name.toLowerCase());
      return s === undefined ? n : { ...n, status: s };
    }),
  };
}

/**
 * The node named `focus` (case-insensitive) with its ancestors and
 * descendants and the edges between them; every node when it names none
 * (callers check the name first). Linear in nodes and edges.
 */
export function focusGraph(g: LineageGraph, focus: string): LineageGraph {
  const start = g.nodes.find((n) => n.name.toLowerCase() === focus.toLowerCase());
  if (!start) return g;
  const up = new Map<string, string[]>();
  const down = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, k: string, v: string) => {
    const list = m.get(k);
    if (list) list.push(v);
    else m.set(k, [v]);
  };
  for (const e of g.edges) {
    add(up, e.to, e.from);
    add(down, e.from, e.to);
  }
  const keep = new Set([start.name]);
  // In a DAG no node is both upstream and downstream of another, so one set serves both walks.
  for (const links of [up, down]) {
    const queue = [start.name];
    while (queue.length > 0) {
      for (const next of links.get(queue.pop()!) ?? []) {
        if (keep.has(next)) continue;
        keep.add(next);
        queue.push(next);
      }
    }
  }
  return { nodes: g.nodes.filter((n) => keep.has(n.name)), edges: g.edges.filter((e) => keep.has(e.from) && keep.has(e.to)) };
}
