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
import { posix, resolve } from 'node:path';
import { EngineError, errorChain } from '../../../engine/errors.js';
import { withLayoutStatuses } from '../../../engine/lineage/layout-lineage.js';
import { withStatuses, type LineageStatus } from '../../../engine/lineage/lineage-graph.js';
import { lineageView, type LineageView, type LineageViewRequest } from '../../../engine/lineage/lineage-view.js';
import { lineageSvg } from '../../../engine/lineage/render-lineage.js';
import type { StateStore } from '../../../engine/state/store.js';
import { notFound } from '../../http-error.js';
import { historySvg } from '../charts/history.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, type UiRequest, type UiRoute } from '../ui-route.js';
import { trusted } from '../views.js';
import { buildRuns, type BuildRun } from './build-runs.js';

const CONFIG_FILES = new Set(['service_build.yml', 'service_build.yaml', 'sling_build.yml', 'sling_build.yaml', 'dbt_project.yml']);
/** Build projects whose compiled graph and layout are kept (least recently used dropped first). */
const KEPT_VIEWS = 16;
/** Zoom levels of the graph page (percent of the laid-out size), and `fit` (as wide as the page). */
export const ZOOM_LEVELS = [25, 50, 75, 100, 150, 200] as const;

/** Newest known status per node (lower-cased full and short names) of the build project at `root`, the run it came from, and the runs read. */
export async function lastBuildStatuses(store: StateStore, projectId: string, jobIds: readonly string[], root: string): Promise<{ statuses: Map<string, LineageStatus>; lastRun?: string; runs: BuildRun[] }> {
  const runs = await buildRuns(store, projectId, jobIds, root);
  const statuses = new Map<string, LineageStatus>();
  for (const run of runs) {
    for (const r of run.results) {
      if (r.type === 'test' || (r.status !== 'success' && r.status !== 'error' && r.status !== 'skipped')) continue;
      const key = r.name.toLowerCase();
      if (!statuses.has(key)) statuses.set(key, r.status);
    }
  }
  return { statuses, runs, ...(runs[0] ? { lastRun: runs[0].exec.exec_id } : {}) };
}

/** `zoom` of the graph page: a level of ZOOM_LEVELS or `fit`; an error names the parameter. */
function zoomOf(raw: string): number | 'fit' {
  if (raw === '') return 100;
  if (raw === 'fit') return 'fit';
  const n = Number(raw);
  if (!(ZOOM_LEVELS as readonly number[]).includes(n)) throw new EngineError('bad_request', `zoom must be fit or one of ${ZOOM_LEVELS.join(', ')} (percent), got ${JSON.stringify(raw)}`);
  return n;
}

interface Loaded {
  dir: string;
  label: string;
  path: string;
  view?: LineageView;
  error?: string;
  statuses: Map<string, LineageStatus>;
  lastRun?: string;
  runs: BuildRun[];
}

/** The build projects of a tree, their graphs (kept while their files are unchanged) and their nodes' last statuses. */
class LineageSource {
  readonly #compute: (req: LineageViewRequest) => Promise<LineageView>;
  readonly #kept = new Map<string, { readonly fingerprint: string; readonly view: LineageView }>();

  constructor(private readonly deps: ConsoleDeps) {
    this.#compute = deps.lineage ?? (async (req: LineageViewRequest) => lineageView(req));
  }

  async buildProjects(projectId: string) {
    const files = await this.deps.projects.listFiles(projectId, {});
    return files
      .filter((f) => !f.is_dir && CONFIG_FILES.has(posix.basename(f.name)))
      .map((f) => {
        const dir = posix.dirname(f.name) === '.' ? '' : posix.dirname(f.name);
        return { dir, label: dir === '' ? '/' : dir, config: posix.basename(f.name) };
      });
  }

  /** The graph (and layout) of a build project, or of its part around `focus`, computed again only when one of its files changed. */
  async graphOf(projectId: string, dir: string, path: string, focus?: string): Promise<LineageView> {
    const files = await this.deps.projects.listFiles(projectId, dir === '' ? {} : { prefix: `${dir}/` });
    const fingerprint = files.map((f) => `${f.name}\u0000${f.size}\u0000${f.updated}`).join('\n');
    const key = `${projectId}\u0000${dir}\u0000${focus?.toLowerCase() ?? ''}`;
    const kept = this.#kept;
    const hit = kept.get(key);
    if (hit && hit.fingerprint === fingerprint) {
      kept.delete(key);
      kept.set(key, hit);
      return hit.view;
    }
    const view = await this.#compute({ path, layout: true, ...(focus !== undefined ? { focus } : {}) });
    kept.set(key, { fingerprint, view });
    while (kept.size > KEPT_VIEWS) kept.delete(kept.keys().next().value!);
    return view;
  }

  /** The build project `dir` (one found in the tree: nothing outside it is ever read); a compile failure is data. */
  async load(req: UiRequest, node?: string): Promise<Loaded> {
    const dir = req.query('dir');
    const found = (await this.buildProjects(req.projectId)).find((p) => p.dir === dir);
    if (!found) throw notFound(`no build project at ${JSON.stringify(dir || '/')} in this project's tree`);
    const path = resolve(this.deps.projectRoot(req.projectId), dir);
    const pipelines = await this.deps.projects.listJobs(req.projectId, { type: 'pipeline' });
    const { statuses, lastRun, runs } = await lastBuildStatuses(this.deps.store, req.projectId, pipelines.map((j) => j.id), path);
    try {
      const view = node === undefined ? await this.graphOf(req.projectId, dir, path) : await this.#compute({ path, layout: false, node });
      return { dir, label: found.label, path, view, statuses, runs, ...(lastRun ? { lastRun } : {}) };
    } catch (err) {
      return { dir, label: found.label, path, error: errorChain(err), statuses, runs };
    }
  }
}

/** The graph page's zoom controls: the level shown and the links one level out, one in, to 100 % and to fit. */
function zoomControls(dir: string, focus: string | undefined, zoom: number | 'fit') {
  const link = (z: number | 'fit') => {
    const q = new URLSearchParams({ dir });
    if (focus !== undefined) q.set('focus', focus);
    if (z !== 100) q.set('zoom', String(z));
    return `/ui/lineage/graph?${q.toString()}`;
  };
  const at = zoom === 'fit' ? -1 : (ZOOM_LEVELS as readonly number[]).indexOf(zoom);
  return { label: zoom === 'fit' ? 'fit' : `${zoom}%`, ...(at > 0 ? { out: link(ZOOM_LEVELS[at - 1]!) } : {}), ...(at >= 0 && at < ZOOM_LEVELS.length - 1 ? { in: link(ZOOM_LEVELS[at + 1]!) } : {}), reset: link(100), fit: link('fit') };
}

async function graphPage(source: LineageSource, req: UiRequest) {
  const loaded = await source.load(req);
  const { dir, label, error, statuses, lastRun } = loaded;
  if (!loaded.view?.layout) return page('lineageGraph', { title: `Lineage of ${label}`, nav: 'lineage', dir, label, error }, 422);
  let zoom: number | 'fit';
  try {
    zoom = zoomOf(req.query('zoom'));
  } catch (err) {
    return page('lineageGraph', { title: `Lineage of ${label}`, nav: 'lineage', dir, label, error: (err as Error).message }, 400);
  }
  const focusName = req.query('focus');
  const focusNode = focusName === '' ? undefined : loaded.view.graph.nodes.find((n) => n.name.toLowerCase() === focusName.toLowerCase());
  if (focusName !== '' && !focusNode) throw notFound(`no model or seed ${JSON.stringify(focusName)} in ${label} to focus on`);
  const view = focusNode ? await source.graphOf(req.projectId, dir, loaded.path, focusNode.name) : loaded.view;
  const graph = withStatuses(view.graph, statuses);
  const upstream = new Map<string, string[]>();
  for (const e of graph.edges) upstream.set(e.to, [...(upstream.get(e.to) ?? []), e.from]);
  const href = (name: string) => `/ui/lineage/node?dir=${encodeURIComponent(dir)}&name=${encodeURIComponent(name)}`;
  return page('lineageGraph', {
    title: focusNode ? `Lineage of ${label} around ${focusNode.name}` : `Lineage of ${label}`,
    nav: 'lineage',
    dir,
    label,
    lastRun,
    ...(focusNode ? { focus: focusNode.name, whole: `/ui/lineage/graph?dir=${encodeURIComponent(dir)}`, shown: graph.nodes.length, of: loaded.view.graph.nodes.length } : {}),
    zoom: zoomControls(dir, focusNode?.name, zoom),
    // Built by lineageSvg, which escapes every name it writes (engine/lineage/render-lineage.ts).
    svg: trusted(lineageSvg(withLayoutStatuses(view.layout!, statuses), { href, scale: zoom === 'fit' ? 'fit' : zoom / 100 })),
    nodes: graph.nodes.map((n) => ({ ...n, deps: upstream.get(n.name) ?? [] })),
  });
}

async function nodePage(source: LineageSource, req: UiRequest) {
  const name = req.query('name');
  const { dir, label, view, error, statuses, runs } = await source.load(req, name);
  if (!view) throw new EngineError('bad_request', error ?? 'could not compile the build project');
  const node = withStatuses(view.graph, statuses).nodes.find((n) => n.name.toLowerCase() === name.toLowerCase());
  const detail = view.detail;
  if (!node || !detail) throw notFound(`no model or seed ${JSON.stringify(name)} in ${label}`);
  const recent = nodeRuns(runs, node.fullName, node.name);
  return page('lineageNode', {
    title: node.name,
    nav: 'lineage',
    dir,
    label,
    node,
    fileName: dir === '' ? node.file : `${dir}/${node.file}`,
    upstream: view.graph.edges.filter((e) => e.to === node.name).map((e) => e.from),
    downstream: view.graph.edges.filter((e) => e.from === node.name).map((e) => e.to),
    focusLink: `/ui/lineage/graph?dir=${encodeURIComponent(dir)}&focus=${encodeURIComponent(node.name)}`,
    recent,
    ...(recent.length > 0 ? { history: trusted(historySvg([...recent].reverse(), `durations of ${node.name} in its last ${recent.length} runs`)) } : {}),
    isModel: detail.kind === 'model',
    ...(detail.kind === 'model' ? { config: detail.config, tests: detail.tests, sql: detail.sql, pre: detail.pre, post: detail.post } : {}),
  });
}

export function lineagePages(deps: ConsoleDeps): UiRoute[] {
  const source = new LineageSource(deps);
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/lineage$/,
      handler: async (req) => page('lineageIndex', { title: 'Lineage', nav: 'lineage', projects: await source.buildProjects(req.projectId) }),
    },
    { method: 'GET', pattern: /^\/ui\/lineage\/graph$/, handler: (req) => graphPage(source, req) },
    { method: 'GET', pattern: /^\/ui\/lineage\/node$/, handler: (req) => nodePage(source, req) },
  ];
}

/** Runs shown on a node's page (newest first). */
export const NODE_RUNS = 20;

/** The node's record in each of the newest runs that built it (by full or short name, case-insensitive). */
function nodeRuns(runs: readonly BuildRun[], fullName: string, name: string) {
  const keys = new Set([fullName.toLowerCase(), name.toLowerCase()]);
  const out = [];
  for (const run of runs) {
    const r = run.results.find((x) => x.type !== 'test' && keys.has(x.name.toLowerCase()));
    if (!r) continue;
    out.push({ execId: run.exec.exec_id, stepId: run.stepId, status: r.status, duration: r.status === 'skipped' ? null : r.duration, rows: r.rows, startTime: r.start_time ?? run.exec.start_time, note: `${r.rows} rows` });
    if (out.length === NODE_RUNS) break;
  }
  return out;
}
