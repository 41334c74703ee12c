/**
 * Lineage: the build projects found in the tree (folders with a build
 * config), a project's DAG as an SVG laid out on the server (dagre) with
 * nodes coloured by their last run, and a node's page with its config,
 * tests and compiled SQL. The last run status of a node comes from the
 * newest `run` build step of the project's pipeline jobs that built it.
 */
import { realpathSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import type { CompiledNode } from '../../../engine/compile/compile.js';
import { EngineError, errorChain } from '../../../engine/errors.js';
import { layoutLineage } from '../../../engine/lineage/layout-lineage.js';
import { withStatuses, type LineageStatus } from '../../../engine/lineage/lineage-graph.js';
import { projectLineage, type ProjectLineage } from '../../../engine/lineage/project-lineage.js';
import { lineageSvg } from '../../../engine/lineage/render-lineage.js';
import type { Logger } from '../../../engine/log.js';
import type { StateStore } from '../../../engine/state/store.js';
import { notFound } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, type UiRequest, type UiRoute } from '../ui-route.js';
import { trusted } from '../views.js';

const CONFIG_FILES = new Set(['service_build.yml', 'service_build.yaml', 'sling_build.yml', 'sling_build.yaml', 'dbt_project.yml']);
/** Recent executions per pipeline job searched for build results. */
const RUNS_PER_JOB = 10;

const quiet: Logger = { log: () => {}, enabled: () => false };

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** Newest known status per node (lower-cased full and short names) of the build project at `root`, and the run it came from. */
export async function lastBuildStatuses(store: StateStore, projectId: string, jobIds: readonly string[], root: string): Promise<{ statuses: Map<string, LineageStatus>; lastRun?: string }> {
  const target = real(root);
  const runs = (await Promise.all(jobIds.map((jobId) => store.listExecutions({ projectId, jobId, order: 'desc', limit: RUNS_PER_JOB })))).flat();
  runs.sort((a, b) => (a.start_time < b.start_time ? 1 : a.start_time > b.start_time ? -1 : 0));
  const statuses = new Map<string, LineageStatus>();
  let lastRun: string | undefined;
  for (const exec of runs) {
    const steps = await store.listSteps(exec.exec_id, { excludeOutput: true });
    for (const step of steps) {
      const s = step.state as { path?: unknown; command?: unknown; results?: unknown } | null;
      if (step.type !== 'build' || !s || typeof s.path !== 'string' || s.command !== 'run' || !Array.isArray(s.results) || real(s.path) !== target) continue;
      lastRun ??= exec.exec_id;
      for (const r of s.results as { name?: unknown; type?: unknown; status?: unknown }[]) {
        if (typeof r.name !== 'string' || r.type === 'test' || (r.status !== 'success' && r.status !== 'error' && r.status !== 'skipped')) continue;
        const key = r.name.toLowerCase();
        if (!statuses.has(key)) statuses.set(key, r.status);
      }
    }
  }
  return { statuses, ...(lastRun ? { lastRun } : {}) };
}

export function lineagePages(deps: ConsoleDeps): UiRoute[] {
  const { projects, store } = deps;

  async function buildProjects(projectId: string) {
    const files = await projects.listFiles(projectId, {});
    return files
      .filter((f) => !f.is_dir && CONFIG_FILES.has(posix.basename(f.name)))
      .map((f) => {
        const dir = posix.dirname(f.name) === '.' ? '' : posix.dirname(f.name);
        return { dir, label: dir === '' ? '/' : dir, config: posix.basename(f.name) };
      });
  }

  /** The build project `dir` (one found in the tree: nothing outside it is ever read), compiled. */
  async function load(req: UiRequest): Promise<{ dir: string; label: string; lineage?: ProjectLineage; error?: string; abs: string }> {
    const dir = req.query('dir');
    const found = (await buildProjects(req.projectId)).find((p) => p.dir === dir);
    if (!found) throw notFound(`no build project at ${JSON.stringify(dir || '/')} in this project's tree`);
    const abs = resolve(deps.projectRoot(req.projectId), dir);
    try {
      return { dir, label: found.label, abs, lineage: projectLineage({ path: abs }, quiet) };
    } catch (err) {
      return { dir, label: found.label, abs, error: errorChain(err) };
    }
  }

  async function statusesFor(req: UiRequest, abs: string) {
    const pipelines = await projects.listJobs(req.projectId, { type: 'pipeline' });
    return lastBuildStatuses(store, req.projectId, pipelines.map((j) => j.id), abs);
  }

  return [
    {
      method: 'GET',
      pattern: /^\/ui\/lineage$/,
      handler: async (req) => page('lineageIndex', { title: 'Lineage', nav: 'lineage', projects: await buildProjects(req.projectId) }),
    },
    {
      method: 'GET',
      pattern: /^\/ui\/lineage\/graph$/,
      handler: async (req) => {
        const { dir, label, abs, lineage, error } = await load(req);
        if (!lineage) return page('lineageGraph', { title: `Lineage of ${label}`, nav: 'lineage', dir, label, error }, 422);
        const { statuses, lastRun } = await statusesFor(req, abs);
        const graph = withStatuses(lineage.graph, statuses);
        const href = (name: string) => `/ui/lineage/node?dir=${encodeURIComponent(dir)}&name=${encodeURIComponent(name)}`;
        const deps = new Map<string, string[]>();
        for (const e of graph.edges) deps.set(e.to, [...(deps.get(e.to) ?? []), e.from]);
        return page('lineageGraph', {
          title: `Lineage of ${label}`,
          nav: 'lineage',
          dir,
          label,
          lastRun,
          svg: trusted(lineageSvg(layoutLineage(graph), { href })),
          nodes: graph.nodes.map((n) => ({ ...n, deps: deps.get(n.name) ?? [] })),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/ui\/lineage\/node$/,
      handler: async (req) => {
        const { dir, label, abs, lineage, error } = await load(req);
        if (!lineage) throw new EngineError('bad_request', error ?? 'could not compile the build project');
        const name = req.query('name').toLowerCase();
        const compiled: CompiledNode | undefined = lineage.prepared.compiled.nodes.find((n) => n.name.toLowerCase() === name);
        const node = lineage.graph.nodes.find((n) => n.name.toLowerCase() === name);
        if (!compiled || !node) throw notFound(`no model or seed ${JSON.stringify(req.query('name'))} in ${label}`);
        const { statuses } = await statusesFor(req, abs);
        const status = statuses.get(node.fullName.toLowerCase()) ?? statuses.get(node.name.toLowerCase());
        return page('lineageNode', {
          title: node.name,
          nav: 'lineage',
          dir,
          label,
          node: { ...node, ...(status ? { status } : {}) },
          fileName: dir === '' ? node.file : `${dir}/${node.file}`,
          upstream: lineage.graph.edges.filter((e) => e.to === node.name).map((e) => e.from),
          downstream: lineage.graph.edges.filter((e) => e.from === node.name).map((e) => e.to),
          isModel: compiled.kind === 'model',
          ...(compiled.kind === 'model' ? { config: compiled.config, tests: compiled.tests, sql: compiled.sql, pre: compiled.pre, post: compiled.post } : {}),
        });
      },
    },
  ];
}
