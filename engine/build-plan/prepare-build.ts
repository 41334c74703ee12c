/**
 * The stages shared by every build command: load the
 * project, resolve the target connection, compile, select. `list` stops
 * after selection without touching the target; `compile` only looks up the
 * target's type; `run`/`test` go on to execute. Independent sub-projects
 * (`-R` with no root config) are prepared one by one.
 *
 * The dbt loader and the model renderer come in as `BuildParts`, asked for
 * only when a dbt project or a model to render needs them: the command line
 * loads them on demand (a compile from the cache loads neither); prepare.ts
 * binds them statically for everyone else.
 */
import { join } from 'node:path';
import { atWorkingDir, declaredType, loadConnections, type Connection, type ConnectionRegistry } from '../connections/index.js';
import { duckdbCatalogName } from '../targets/duckdb/catalog.js';
import { openCache, type CacheSession } from '../compile/cache-session.js';
import type { RenderWorkers } from '../compile/parallel-render.js';
import type { ChangeView } from '../files/change-journal.js';
import { CACHE_DIR_NAME, type CacheLocation } from '../compile/compile-cache.js';
import { compileProject, selectCompiled, type CompiledNode, type CompiledProject, type TargetType } from '../compile/compile.js';
import { splitSelectors } from '../dag/select.js';
import { EngineError } from '../errors.js';
import { envChoice, type EnvChoice } from '../env-choice.js';
import type { Logger } from '../log.js';
import { findConfigFiles } from '../project/config.js';
import { discover, findChildProjects, type DiscoveredFile } from '../project/discover.js';
import { loadProject, resolveBuildPath, type Project } from '../project/load.js';
import { isDbtProject } from '../project/dbt/dbt-project-file.js';
import type { compileDbtBuild } from '../project/dbt/load-dbt.js';
import type { Renderer } from '../compile/renderer.js';

export type BuildVerb = 'run' | 'list' | 'test' | 'compile';

export interface BuildRequest {
  readonly verb: BuildVerb;
  readonly path: string;
  readonly target?: string;
  readonly select: readonly string[];
  readonly exclude: readonly string[];
  readonly schema?: string;
  readonly prod?: boolean;
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly recursive?: boolean;
  readonly fullRefresh?: boolean;
  /** dbt projects: where profiles.yml is (`--profiles-dir`). */
  readonly profilesDir?: string;
  readonly stepEnv?: Readonly<Record<string, string>>;
  /**
   * Where the target connection is looked up; default: the build directory's
   * `env.yaml`, the host env file and the environment. The daemon passes the
   * project's connections.
   */
  readonly connections?: ConnectionRegistry;
  /**
   * The working directory relative `duckdb://` URL paths resolve against. A pipeline
   * `build` step passes the build directory; the command line keeps the process's.
   */
  readonly cwd?: string;
  /**
   * The compile cache: `disk` (command-line builds: `<build dir>/.service/`),
   * `memory` (default: this process only — the daemon), `off`. The
   * environment variable SERVICE_COMPILE_CACHE=off turns it off everywhere.
   */
  readonly compileCache?: 'disk' | 'memory' | 'off';
  /**
   * With a `disk` cache: the cache file is not written by prepareBuild but
   * handed back as `writeCompileCache`, so a command writes it after its
   * output is out (writing 10,000 models' entries took ≈0.1–0.3 s).
   */
  readonly deferCacheWrite?: boolean;
  /**
   * What changed under the build directory (the daemon: engine/files/change-journal.ts):
   * with a memory cache, files the journal reports unchanged are not looked at again.
   */
  readonly changes?: ChangeView;
}

export interface PreparedBuild {
  readonly root: string;
  readonly compiled: CompiledProject;
  readonly selected: readonly CompiledNode[];
  /** Target connection name ('' when none, list only). */
  readonly targetName: string;
  /** The resolved connection (run/test/compile with a known connection). */
  readonly connection?: Connection;
  /** `deferCacheWrite`: writes the compile cache file; absent when there is nothing new to write. */
  readonly writeCompileCache?: () => void;
}

export const NO_TARGET = "No target specified. Use '--target <conn>' or set target in service_build.yml.";

export interface SubProjectPlan {
  readonly mode: 'single' | 'independent';
  readonly root: string;
  /** Independent mode: the child directory names, sorted. */
  readonly children: readonly string[];
}

/** Decides between one project and independent sub-projects. */
export function planProjects(req: Pick<BuildRequest, 'path' | 'recursive'>): SubProjectPlan {
  const root = resolveBuildPath(req.path);
  if (!req.recursive || findConfigFiles(root).length > 0) return { mode: 'single', root, children: [] };
  const children = findChildProjects(root);
  return children.length > 0 ? { mode: 'independent', root, children } : { mode: 'single', root, children: [] };
}

const SUPPORTED: ReadonlySet<string> = new Set(['postgres', 'duckdb']);

/** What a build needs only sometimes, asked for when it does. */
export interface BuildParts {
  /** The dbt loader (engine/project/dbt/load-dbt.ts): for a dbt project. */
  readonly dbt: () => typeof compileDbtBuild;
  /** The model renderer (engine/compile/model-renderer.ts): for a model not in the compile cache. */
  readonly renderer: () => Renderer;
}

/** Loads, resolves the target per verb, compiles and selects one project. */
export function prepareBuildWith(req: BuildRequest, logger: Logger, parts: BuildParts): PreparedBuild {
  const c = compileBuild(req, logger, parts);
  return { ...c, selected: selectCompiled(c.compiled, req.select, req.exclude) };
}

type CompiledBuild = Omit<PreparedBuild, 'selected'>;

/** Load, target resolution and compile: everything before selection. */
function compileBuild(req: BuildRequest, logger: Logger, parts: BuildParts): CompiledBuild {
  // A dbt project (dbt_project.yml and no config of ours) loads through the dbt loader into the same nodes.
  const buildRoot = resolveBuildPath(req.path);
  const hasConfig = findConfigFiles(buildRoot).length > 0;
  if (!hasConfig && isDbtProject(buildRoot)) {
    try {
      return parts.dbt()({ ...req, root: buildRoot }, logger);
    } catch (err) {
      throw EngineError.wrap(`could not load dbt project from ${buildRoot}`, err);
    }
  }
  // -R with a root config: the child projects' files join this DAG (merged `-R` mode).
  const mergeChildren = req.recursive && hasConfig ? findChildProjects(buildRoot) : undefined;
  const location = compileCacheLocation(buildRoot, req.compileCache, logger);
  const cache = location ? openCache(location, logger, req.changes?.root === location.root ? req.changes : undefined) : undefined;
  // A compile that will render its models (no cache entries to take them from) starts its render
  // workers once the walk has counted them, so they load while this thread reads the files.
  let workers: RenderWorkers | undefined;
  const onWalk = cache === undefined || cache.empty ? (files: readonly DiscoveredFile[]) => (workers = parts.renderer().startRenderWorkers(files.filter((f) => f.kind === 'model').length, logger)) : undefined;
  try {
    const project = loadProject(req.path, { ...req, logger, mergeChildren, ...(cache ? { cache } : {}), ...(onWalk ? { onWalk } : {}) });
    return compileLoaded(req, logger, parts, buildRoot, project, cache, workers);
  } finally {
    workers?.stop();
  }
}

/** Target resolution and compile of a loaded project. */
function compileLoaded(req: BuildRequest, logger: Logger, parts: BuildParts, buildRoot: string, project: Project, cache: CacheSession | undefined, workers: RenderWorkers | undefined): CompiledBuild {
  if (project.config.dbtProject === null && isDbtProject(buildRoot)) {
    logger.log('warn', `dbt_project.yml is not read: ${project.config.fileRel} makes this a project of service build's own format (remove it to build the dbt project)`);
  }
  const targetName = project.settings.target ?? '';
  if (req.verb !== 'list' && targetName === '') throw new EngineError('target', NO_TARGET);
  let connection: Connection | undefined;
  let targetType: TargetType = '';
  if (req.verb !== 'list') {
    const registry = req.connections ?? loadConnections({ projectEnvFile: join(project.root, 'env.yaml'), env: { ...process.env, ...(req.stepEnv ?? {}) } });
    connection = registry.get(targetName);
    if (connection && req.cwd !== undefined) connection = atWorkingDir(connection, req.cwd);
    if (!connection) {
      if (req.verb === 'compile') logger.log('warn', `target connection '${targetName}' not found locally; statement splitting will use the generic dialect`);
      else throw new EngineError('target', `connection '${targetName}' not found`);
    } else if (connection.type === 'invalid') {
      throw new EngineError('target', `connection '${targetName}': ${connection.problem}`);
    } else if (!SUPPORTED.has(connection.type)) {
      // The type as written (`mysql`), not the registry's `unsupported` marker.
      throw new EngineError('target', `target '${targetName}' has type '${declaredType(connection)}'; service build supports postgres and duckdb`);
    } else {
      targetType = connection.type as TargetType;
    }
  }
  const catalog = connection?.type === 'duckdb' ? duckdbCatalogName(connection.path) : undefined;
  const compiled = compileProject(project, { logger, targetName, targetType, stepEnv: req.stepEnv, fullRefresh: req.fullRefresh, renderer: parts.renderer, ...(catalog ? { catalog } : {}), ...(cache ? { cache } : {}), ...(workers ? { workers } : {}) });
  const write = cache?.finish(logger);
  if (write !== undefined && !req.deferCacheWrite) write();
  return { root: project.root, compiled, targetName, connection, ...(write !== undefined && req.deferCacheWrite ? { writeCompileCache: write } : {}) };
}

const COMPILE_CACHE: EnvChoice<'on' | 'off'> = {
  name: 'SERVICE_COMPILE_CACHE',
  values: { '': 'on', on: 'on', '1': 'on', true: 'on', off: 'off', '0': 'off', false: 'off' },
  fallback: 'on',
  expected: 'off to disable the compile cache',
  instead: 'the cache stays on',
};

function compileCacheLocation(root: string, mode: BuildRequest['compileCache'], logger: Logger): CacheLocation | undefined {
  if (mode === 'off' || envChoice(COMPILE_CACHE, logger) === 'off') return undefined;
  return mode === 'disk' ? { root, dir: join(root, CACHE_DIR_NAME) } : { root };
}

export interface SubProjectResult {
  /** Child directory name. */
  readonly dir: string;
  readonly path: string;
  readonly prepared?: PreparedBuild;
  /** Load, compile or selection failure: the child runs nothing. */
  readonly error?: unknown;
}

/**
 * Independent mode: every child prepared on its own with the same flags,
 * in directory-name order. Files outside the children are ignored with a
 * warning. A selector item that resolves in at least one child is not an
 * error in the others **[ext]**; one that resolves nowhere fails every child.
 */
export function prepareSubProjectsWith(req: BuildRequest, root: string, children: readonly string[], logger: Logger, parts: BuildParts): SubProjectResult[] {
  const outside = discover(root, { dbtProject: null }).length;
  if (outside > 0) logger.log('warn', `ignoring ${outside} file(s) outside sub-projects`);
  const stages = children.map((dir) => {
    const path = join(root, dir);
    try {
      return { dir, path, compiled: compileBuild({ ...req, path, recursive: false }, logger, parts) };
    } catch (err) {
      return { dir, path, error: err as unknown };
    }
  });
  const graphs = stages.flatMap((s) => (s.compiled ? [s.compiled.compiled] : []));
  const include = splitSelectors(req.select);
  const exclude = splitSelectors(req.exclude);
  const resolvesIn = (cp: CompiledProject, item: string) => {
    try {
      selectCompiled(cp, [item], []);
      return true;
    } catch {
      return false;
    }
  };
  // Items that resolve somewhere are dropped where they do not; the rest stay and fail as usual.
  const somewhere = new Set([...include, ...exclude].filter((item) => graphs.some((cp) => resolvesIn(cp, item))));
  return stages.map(({ dir, path, compiled, error }) => {
    if (!compiled) return { dir, path, error };
    const keep = (item: string) => !somewhere.has(item) || resolvesIn(compiled.compiled, item);
    const inc = include.filter(keep);
    try {
      // Every include item dropped here: nothing of this child was asked for.
      const selected = include.length > 0 && inc.length === 0 ? [] : selectCompiled(compiled.compiled, inc, exclude.filter(keep));
      return { dir, path, prepared: { ...compiled, selected } };
    } catch (err) {
      return { dir, path, error: err };
    }
  });
}

