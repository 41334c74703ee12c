/**
 * Pool task `build.prepare`: a daemon pipeline build step's compile — load,
 * target, compile, select — on a worker thread, so the daemon's thread that
 * serves requests never renders a model nor waits for a compile-time query
 * (the lineage page's compile runs the same way, lineage-view.ts). The
 * answer is plain data: for `list` and `compile` the step's state, for
 * `run` and `test` the build plan the main thread executes
 * (actors/build-run/execute-build.ts executePlan), and the compile's log lines.
 *
 * The build's connections and the project's change journal cross as
 * snapshots. The compile cache is this worker thread's memory: a pool
 * thread compiling a project for the first time reads every file.
 */
import { compileNodeJson } from '../../engine/build-plan/compile-json.js';
import { prepareBuild, prepareSubProjects, type BuildRequest, type PreparedBuild } from '../../engine/build-plan/prepare.js';
import { resolvedMode } from '../../engine/compile/compile.js';
import { registryOf, type Connection } from '../../engine/connections/index.js';
import { errorChain } from '../../engine/errors.js';
import { journalView, type JournalSnapshot } from '../../engine/files/change-journal.js';
import type { Level, Logger } from '../../engine/log.js';
import type { Value } from '../../engine/pipeline/evaluate.js';
import { planBuild, type BuildPlan } from '../build-run/execute-build.js';
import type { TaskHandler } from './task-handler.js';

export interface BuildPrepareTask {
  readonly type: 'build.prepare';
  readonly req: Omit<BuildRequest, 'connections' | 'changes'>;
  /** The host's connections (snapshotConnections); absent: the build directory's own. */
  readonly connections?: readonly Connection[];
  readonly journal?: JournalSnapshot;
  /** Independent sub-projects under `root` (planProjects); absent: one project. */
  readonly children?: readonly string[];
  readonly root: string;
}

/** One prepared project: `state` for list/compile, `plan` for run/test. */
export interface PreparedStep {
  readonly root: string;
  readonly targetName: string;
  readonly state?: Record<string, Value>;
  readonly plan?: BuildPlan;
}

export interface PreparedProject {
  /** Sub-project: its directory name and path. */
  readonly dir?: string;
  readonly path: string;
  readonly prepared?: PreparedStep;
  /** The load, compile or selection failure (its message chain). */
  readonly error?: string;
}

export interface BuildPrepareResult {
  /** The compile's log lines at info and above, in order. */
  readonly lines: readonly (readonly [Level, string])[];
  /** One project, or every sub-project in order. */
  readonly projects: readonly PreparedProject[];
}

function listState(p: PreparedBuild, fullRefresh: boolean): Record<string, Value> {
  const withTarget = p.targetName !== '';
  const results = p.selected.map((n) => ({
    name: n.name,
    type: n.kind === 'seed' ? 'seed' : 'model',
    mode: n.kind === 'seed' ? 'full-refresh' : resolvedMode(n, fullRefresh),
    file: n.source.file,
    ...(withTarget ? { table: n.source.naming.fullName } : {}),
  }));
  return { path: p.root, target: p.targetName, command: 'list', results, total: results.length, ok: results.length, failed: 0, skipped: 0 };
}

function compileState(p: PreparedBuild, fullRefresh: boolean): Record<string, Value> {
  const nodes = p.selected.map((n) => compileNodeJson(n, fullRefresh)) as Value[];
  return { path: p.root, target: p.targetName, command: 'compile', order: p.selected.map((n) => n.name), nodes, results: nodes, total: nodes.length, ok: nodes.length, failed: 0, skipped: 0 };
}

/** What the main thread needs of a prepared project. */
export function preparedStep(p: PreparedBuild, req: Pick<BuildRequest, 'verb' | 'fullRefresh'>): PreparedStep {
  const fullRefresh = req.fullRefresh ?? false;
  const base = { root: p.root, targetName: p.targetName };
  if (req.verb === 'list') return { ...base, state: listState(p, fullRefresh) };
  if (req.verb === 'compile') return { ...base, state: compileState(p, fullRefresh) };
  return { ...base, plan: planBuild(p, { verb: req.verb, fullRefresh }) };
}

/** A logger keeping info and above (what a step's output shows) for the answer. */
function recordingLogger(lines: [Level, string][]): Logger {
  const order: Level[] = ['trace', 'debug', 'info', 'warn', 'error'];
  const enabled = (l: Level) => order.indexOf(l) >= order.indexOf('info');
  return { enabled, log: (level, message) => void (enabled(level) && lines.push([level, message])) };
}

/** Prepares one project (`children` absent) or every sub-project of `root`; failures are in the answer. */
export function prepareProjects(req: BuildRequest, root: string, children: readonly string[] | undefined): BuildPrepareResult {
  const lines: [Level, string][] = [];
  const logger = recordingLogger(lines);
  const prepare = (p: PreparedBuild) => preparedStep(p, req);
  if (children === undefined) {
    try {
      return { lines, projects: [{ path: root, prepared: prepare(prepareBuild(req, logger)) }] };
    } catch (err) {
      return { lines, projects: [{ path: root, error: errorChain(err) }] };
    }
  }
  const projects = prepareSubProjects(req, root, children, logger).map((r): PreparedProject => {
    if (!r.prepared) return { dir: r.dir, path: r.path, error: errorChain(r.error) };
    try {
      return { dir: r.dir, path: r.path, prepared: prepare(r.prepared) };
    } catch (err) {
      return { dir: r.dir, path: r.path, error: errorChain(err) };
    }
  });
  return { lines, projects };
}

export const buildPrepare: TaskHandler<BuildPrepareTask, BuildPrepareResult> = async (task) => {
  const req: BuildRequest = {
    ...task.req,
    ...(task.connections ? { connections: registryOf(task.connections) } : {}),
    ...(task.journal ? { changes: journalView(task.journal) } : {}),
  };
  return prepareProjects(req, task.root, task.children);
};
