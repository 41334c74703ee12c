/**
 * Everything the console's lineage pages show of one build project, as plain
 * data: compile, lay out and draw the graph with the given last-run statuses,
 * and, for a node page, that node's config, tests and compiled SQL. Pure
 * apart from reading the project's files, and JSON-safe in and out, so the
 * daemon runs it on a worker thread: a large project's compile and layout
 * take longer than a page should hold the event loop.
 */
import type { Logger } from '../log.js';
import type { DataTest } from '../project/data-tests.js';
import { layoutLineage } from './layout-lineage.js';
import { withStatuses, type LineageGraph, type LineageStatus } from './lineage-graph.js';
import { projectLineage } from './project-lineage.js';
import { lineageSvg } from './render-lineage.js';

export interface LineageViewRequest {
  /** The build project's directory (absolute). */
  readonly path: string;
  /** Last run statuses by lower-cased full or short node name. */
  readonly statuses: readonly (readonly [string, LineageStatus])[];
  /** Each node links to this prefix followed by its URL-encoded name. */
  readonly hrefPrefix: string;
  /** A node page: whose details to include (case-insensitive). */
  readonly node?: string;
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
  readonly svg: string;
  /** Present when `node` named a node of the project. */
  readonly detail?: NodeDetail;
}

const quiet: Logger = { log: () => {}, enabled: () => false };

export function lineageView(req: LineageViewRequest): LineageView {
  const { prepared, graph: plain } = projectLineage({ path: req.path }, quiet);
  const graph = withStatuses(plain, new Map(req.statuses));
  const svg = lineageSvg(layoutLineage(graph), { href: (name) => `${req.hrefPrefix}${encodeURIComponent(name)}` });
  const wanted = req.node?.toLowerCase();
  const n = wanted === undefined ? undefined : prepared.compiled.nodes.find((c) => c.name.toLowerCase() === wanted);
  if (!n) return { graph, svg };
  const detail: NodeDetail =
    n.kind === 'model'
      ? { name: n.name, kind: 'model', config: JSON.parse(JSON.stringify(n.config)) as Record<string, unknown>, tests: JSON.parse(JSON.stringify(n.tests)) as DataTest[], sql: n.sql, pre: [...n.pre], post: [...n.post] }
      : { name: n.name, kind: 'seed' };
  return { graph, svg, detail };
}
