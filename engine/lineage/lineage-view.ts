/**
 * What the console's lineage pages need of one build project, as plain data:
 * the compiled graph, its layout (for the graph page) and one node's config,
 * tests and compiled SQL (for a node page). Pure apart from reading the
 * project's files, and JSON-safe in and out, so the daemon runs it on a
 * worker thread: a large project's compile and layout take seconds, longer
 * than a page may hold the event loop. Statuses and links are laid over the
 * result by the caller (the layout does not depend on them).
 */
import type { Logger } from '../log.js';
import type { DataTest } from '../project/data-tests.js';
import { layoutLineage, type LineageLayout } from './layout-lineage.js';
import type { LineageGraph } from './lineage-graph.js';
import { focusGraph } from './lineage-graph.js';
import { projectLineage } from './project-lineage.js';

export interface LineageViewRequest {
  /** The build project's directory (absolute). */
  readonly path: string;
  /** Lay the graph out (the graph page). */
  readonly layout: boolean;
  /** A node page: whose details to include (case-insensitive). */
  readonly node?: string;
  /** Only this node (case-insensitive) with everything upstream and downstream of it, laid out on its own. */
  readonly focus?: string;
}

export interface NodeDetail {
  readonly name: string;
  readonly kind: 'model' | 'seed';
  readonly config?: Readonly<Record<string, unknown>>;
  readonly tests?: readonly DataTest[];
  readonly sql?: string;
  readonly pre?: readonly string[];
  readonly post?: readonly string[];
}

export interface LineageView {
  readonly graph: LineageGraph;
  readonly layout?: LineageLayout;
  /** Present when `node` named a node of the project. */
  readonly detail?: NodeDetail;
}

const quiet: Logger = { log: () => {}, enabled: () => false };

/** A plain copy (config and tests may hold class instances or shared references). */
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export function lineageView(req: LineageViewRequest): LineageView {
  const { prepared, graph: whole } = projectLineage({ path: req.path }, quiet);
  const graph = req.focus === undefined ? whole : focusGraph(whole, req.focus);
  const wanted = req.node?.toLowerCase();
  const n = wanted === undefined ? undefined : prepared.compiled.nodes.find((c) => c.name.toLowerCase() === wanted);
  const detail: NodeDetail | undefined =
    n === undefined ? undefined : n.kind === 'model' ? { name: n.name, kind: 'model', config: plain(n.config) as unknown as Record<string, unknown>, tests: plain(n.tests), sql: n.sql, pre: [...n.pre], post: [...n.post] } : { name: n.name, kind: 'seed' };
  return { graph, ...(req.layout ? { layout: layoutLineage(graph) } : {}), ...(detail ? { detail } : {}) };
}
