/**
 * prepare-build.ts with its parts bound statically: the dbt loader and the
 * model renderer are loaded with this module. Long-lived hosts (the daemon,
 * pipeline steps, lineage) and tests use this; the command line binds the
 * parts lazily (cli/build-command/stages.ts).
 */
import type { Logger } from '../log.js';
import { modelRenderer } from '../compile/model-renderer.js';
import { compileDbtBuild } from '../project/dbt/load-dbt.js';
import { prepareBuildWith, prepareSubProjectsWith, type BuildParts, type BuildRequest, type PreparedBuild, type SubProjectResult } from './prepare-build.js';

export { NO_TARGET, planProjects, type BuildRequest, type BuildVerb, type PreparedBuild, type SubProjectPlan, type SubProjectResult } from './prepare-build.js';

const STATIC_PARTS: BuildParts = { dbt: () => compileDbtBuild, renderer: () => modelRenderer };

/** Loads, resolves the target per verb, compiles and selects one project. */
export function prepareBuild(req: BuildRequest, logger: Logger): PreparedBuild {
  return prepareBuildWith(req, logger, STATIC_PARTS);
}

/** Independent sub-projects (prepare-build.ts prepareSubProjectsWith). */
export function prepareSubProjects(req: BuildRequest, root: string, children: readonly string[], logger: Logger): SubProjectResult[] {
  return prepareSubProjectsWith(req, root, children, logger, STATIC_PARTS);
}
