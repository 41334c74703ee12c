/**
 * Lineage: the build projects found in the tree (folders with a build
 * config), a project's DAG as an SVG laid out on the server (dagre) with
 * nodes coloured by their last run, and a node's page with its config,
 * tests and compiled SQL. The compile and layout run through `deps.lineage`
 * (a worker thread in the daemon) and are kept while the build project's
 * files are unchanged (their names, sizes and times), so a second look at a
 * big project costs a listing, not a layout. The last run status of a node
 * comes from the newest `run` build step of the project's pipeline jobs that
 * built it, laid over the kept layout.
 */
import { realpathSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { EngineError, errorChain } from '../../../engine/errors.js';
import { withLayoutStatuses } from '../../../engine/lineage/layout-lineage.js';
import { withStatuses, type LineageStatus } from '../../../engine/lineage/lineage-graph.js';
import { lineageView, type LineageView, type LineageViewRequest } from '../../../engine/lineage/lineage-view.js';
import { lineageSvg } from '../../../engine/lineage/render-lineage.js';
import type { StateStore } from '../../../engine/state/store.js';
import { notFound } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, type UiRequest, type UiRoute } from '../ui-route.js';
import { trusted } from '../views.js';

const CONFIG_FILES = new Set(['service_build.yml', 'service_build.yaml', 'sling_build.yml', 'sling_build.yaml', 'dbt_project.yml']);
/** Recent executions per pipeline job searched for build results. */
const RUNS_PER_JOB = 10;
/** Build projects whose compiled graph and layout are kept (least recently used dropped first). */
const KEPT_VIEWS = 16;

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
  const compute = deps.lineage ?? (async (req: LineageViewRequest) => lineageView(req));
  const kept = new Map<string, { readonly fingerprint: string; readonly view: LineageView }>();

  async function buildProjects(projectId: string) {
    const files = await projects.listFiles(projectId, {});
    return files
      .filter((f) => !f.is_dir && CONFIG_FILES.has(posix.basename(f.name)))
      .map((f) => {
        const dir = posix.dirname(f.name) === '.' ? '' : posix.dirname(f.name);
        return { dir, label: dir === '' ? '/' : dir, config: posix.basename(f.name) };
      });
  }

  /** The graph (and layout) of a build project, computed again only when one of its files changed. */
  async function graphOf(projectId: string, dir: string, path: string): Promise<LineageView> {
    const files = await projects.listFiles(projectId, dir === '' ? {} : { prefix: `${dir}/` });
    const fingerprint = files.map((f) => `${f.name}\u0000${f.size}\u0000${f.updated}`).join('\n');
    const key = `${projectId}\u0000${dir}`;
    const hit = kept.get(key);
    if (hit && hit.fingerprint === fingerprint) {
      kept.delete(key);
      kept.set(key, hit);
      return hit.view;
    }
    const view = await compute({ path, layout: true });
    kept.set(key, { fingerprint, view });
    while (kept.size > KEPT_VIEWS) kept.delete(kept.keys().next().value!);
    return view;
  }

  /** The build project `dir` (one found in the tree: nothing outside it is ever read); a compile failure is data. */
  async function load(req: UiRequest, node?: string): Promise<{ dir: string; label: string; view?: LineageView; error?: string; statuses: Map<string, LineageStatus>; lastRun?: string }> {
    const dir = req.query('dir');
    const found = (await buildProjects(req.projectId)).find((p) => p.dir === dir);
    if (!found) throw notFound(`no build project at ${JSON.stringify(dir || '/')} in this project's tree`);
    const path = resolve(deps.projectRoot(req.projectId), dir);
    const pipelines = await projects.listJobs(req.projectId, { type: 'pipeline' });
    const { statuses, lastRun } = await lastBuildStatuses(store, req.projectId, pipelines.map((j) => j.id), path);
    try {
      const view = node === undefined ? await graphOf(req.projectId, dir, path) : await compute({ path, layout: false, node });
      return { dir, label: found.label, view, statuses, ...(lastRun ? { lastRun } : {}) };
    } catch (err) {
      return { dir, label: found.label, error: errorChain(err), statuses };
    }
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
        const { dir, label, view, error, statuses, lastRun } = await load(req);
        if (!view?.layout) return page('lineageGraph', { title: `Lineage of ${label}`, nav: 'lineage', dir, label, error }, 422);
        const graph = withStatuses(view.graph, statuses);
        const upstream = new Map<string, string[]>();
        for (const e of graph.edges) upstream.set(e.to, [...(upstream.get(e.to) ?? []), e.from]);
        const href = (name: string) => `/ui/lineage/node?dir=${encodeURIComponent(dir)}&name=${encodeURIComponent(name)}`;
        return page('lineageGraph', {
          title: `Lineage of ${label}`,
          nav: 'lineage',
          dir,
          label,
          lastRun,
          // Built by lineageSvg, which escapes every name it writes (engine/lineage/render-lineage.ts).
          svg: trusted(lineageSvg(withLayoutStatuses(view.layout, statuses), { href })),
          nodes: graph.nodes.map((n) => ({ ...n, deps: upstream.get(n.name) ?? [] })),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/ui\/lineage\/node$/,
      handler: async (req) => {
        const name = req.query('name');
        const { dir, label, view, error, statuses } = await load(req, name);
        if (!view) throw new EngineError('bad_request', error ?? 'could not compile the build project');
        const node = withStatuses(view.graph, statuses).nodes.find((n) => n.name.toLowerCase() === name.toLowerCase());
        const detail = view.detail;
        if (!node || !detail) throw notFound(`no model or seed ${JSON.stringify(name)} in ${label}`);
        return page('lineageNode', {
          title: node.name,
          nav: 'lineage',
          dir,
          label,
          node,
          fileName: dir === '' ? node.file : `${dir}/${node.file}`,
          upstream: view.graph.edges.filter((e) => e.to === node.name).map((e) => e.from),
          downstream: view.graph.edges.filter((e) => e.from === node.name).map((e) => e.to),
          isModel: detail.kind === 'model',
          ...(detail.kind === 'model' ? { config: detail.config, tests: detail.tests, sql: detail.sql, pre: detail.pre, post: detail.post } : {}),
        });
      },
    },
  ];
}
