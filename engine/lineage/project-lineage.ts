/**
 * A build directory's lineage: load and compile it as `service build list`
 * does (no target connection needed), keep the selected nodes and the edges
 * between them.
 */
import { prepareBuild, type PreparedBuild } from '../build-plan/prepare.js';
import type { Logger } from '../log.js';
import { lineageGraph, type LineageGraph } from './lineage-graph.js';

export interface LineageRequest {
  readonly path: string;
  readonly select?: readonly string[];
  readonly exclude?: readonly string[];
  readonly schema?: string;
  readonly prod?: boolean;
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface ProjectLineage {
  readonly prepared: PreparedBuild;
  readonly graph: LineageGraph;
}

export function projectLineage(req: LineageRequest, logger: Logger): ProjectLineage {
  const prepared = prepareBuild(
    { verb: 'list', path: req.path, select: req.select ?? [], exclude: req.exclude ?? [], schema: req.schema, prod: req.prod, vars: req.vars },
    logger,
  );
  const full = lineageGraph(prepared.compiled);
  const keep = new Set(prepared.selected.map((n) => n.name));
  const graph = keep.size === full.nodes.length ? full : { nodes: full.nodes.filter((n) => keep.has(n.name)), edges: full.edges.filter((e) => keep.has(e.from) && keep.has(e.to)) };
  return { prepared, graph };
}
