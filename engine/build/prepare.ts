/**
 * The stages shared by every build command (build.md §13.1): load the
 * project, resolve the target connection, compile, select. `list` stops
 * after selection without touching the target; `compile` only looks up the
 * target's type; `run`/`test` go on to execute. Independent sub-projects
 * (`-R` with no root config, §17) are prepared one by one.
 */
import { join } from 'node:path';
import { loadConnections, type Connection } from '../connections/index.js';
import { compileProject, selectCompiled, type CompiledNode, type CompiledProject, type TargetType } from '../compile/compile.js';
import { EngineError } from '../errors.js';
import type { Logger } from '../log.js';
import { findConfigFiles } from '../project/config.js';
import { findChildProjects } from '../project/discover.js';
import { loadProject, resolveBuildPath } from '../project/load.js';

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
  readonly stepEnv?: Readonly<Record<string, string>>;
}

export interface PreparedBuild {
  readonly root: string;
  readonly compiled: CompiledProject;
  readonly selected: readonly CompiledNode[];
  /** Target connection name ('' when none, list only). */
  readonly targetName: string;
  /** The resolved connection (run/test/compile with a known connection). */
  readonly connection?: Connection;
}

export const NO_TARGET = "No target specified. Use '--target <conn>' or set target in service_build.yml.";

export interface SubProjectPlan {
  readonly mode: 'single' | 'independent';
  readonly root: string;
  /** Independent mode: the child directory names, sorted. */
  readonly children: readonly string[];
}

/** Decides between one project and independent sub-projects (§17). */
export function planProjects(req: Pick<BuildRequest, 'path' | 'recursive'>): SubProjectPlan {
  const root = resolveBuildPath(req.path);
  if (!req.recursive || findConfigFiles(root).length > 0) return { mode: 'single', root, children: [] };
  const children = findChildProjects(root);
  return children.length > 0 ? { mode: 'independent', root, children } : { mode: 'single', root, children: [] };
}

const SUPPORTED: ReadonlySet<string> = new Set(['postgres', 'duckdb']);

/** Loads, resolves the target per verb, compiles and selects one project. */
export function prepareBuild(req: BuildRequest, logger: Logger): PreparedBuild {
  const project = loadProject(req.path, { ...req, logger });
  const targetName = project.settings.target ?? '';
  if (req.verb !== 'list' && targetName === '') throw new EngineError('target', NO_TARGET);
  let connection: Connection | undefined;
  let targetType: TargetType = '';
  if (req.verb !== 'list') {
    const registry = loadConnections({ projectEnvFile: join(project.root, 'env.yaml'), env: { ...process.env, ...(req.stepEnv ?? {}) } });
    connection = registry.get(targetName);
    if (!connection) {
      if (req.verb === 'compile') logger.log('warn', `target connection '${targetName}' not found locally; statement splitting will use the generic dialect`);
      else throw new EngineError('target', `connection '${targetName}' not found`);
    } else if (!SUPPORTED.has(connection.type)) {
      throw new EngineError('target', `target '${targetName}' has type '${connection.type}'; service build supports postgres and duckdb`);
    } else {
      targetType = connection.type as TargetType;
    }
  }
  const compiled = compileProject(project, { logger, targetName, targetType, stepEnv: req.stepEnv, fullRefresh: req.fullRefresh });
  const selected = selectCompiled(compiled, req.select, req.exclude);
  return { root: project.root, compiled, selected, targetName, connection };
}
