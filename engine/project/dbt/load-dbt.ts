/**
 * The dbt loader: a directory with dbt_project.yml becomes the same compiled
 * DAG our own format produces (models, seeds and — here — one node per
 * test), so the runner does not know which format it came from.
 *
 * The stages, each in its own module: the scope every stage shares
 * (dbt-scope.ts: project file, profile, macros, resources, refs), the models'
 * two renders (dbt-model-sql.ts), what each node reads (dbt-node-deps.ts),
 * the model and seed nodes (dbt-compiled-nodes.ts), the test nodes
 * (dbt-test-nodes.ts), then the DAG here.
 */
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { graphNode, type CompiledModel, type CompiledNode, type CompiledProject, type CompiledSeed, type CompiledTest } from '../../compile/compile.js';
import { NodeIndex } from '../../compile/node-index.js';
import { topoOrder } from '../../dag/order.js';
import { emptyConfig } from '../config.js';
import type { Project } from '../load.js';
import { compiledModels, compiledSeeds, liveRecipeMaker } from './dbt-compiled-nodes.js';
import { learnConfigs, nameResources, renderModelSql } from './dbt-model-sql.js';
import { NodeDeps } from './dbt-node-deps.js';
import { lower } from './dbt-resources.js';
import { DbtScope, type DbtBuild, type DbtBuildRequest } from './dbt-scope.js';
import { compileTests, type TestNodes } from './dbt-test-nodes.js';

export type { DbtBuild, DbtBuildRequest } from './dbt-scope.js';

export function compileDbtBuild(req: DbtBuildRequest, logger: Logger): DbtBuild {
  let scope: DbtScope | undefined;
  try {
    scope = new DbtScope(req, logger);
    return compileDbt(scope);
  } finally {
    scope?.close();
  }
}

function compileDbt(scope: DbtScope): DbtBuild {
  learnConfigs(scope);
  const { enabled, seeds } = nameResources(scope);
  renderModelSql(scope, enabled);
  const deps = new NodeDeps(scope, enabled, seeds);
  const liveRecipeOf = liveRecipeMaker(scope, enabled, seeds, deps);
  const models = compiledModels(enabled, deps, liveRecipeOf);
  const compiledSeedNodes = compiledSeeds(scope, seeds);
  const tests = compileTests(scope, deps, liveRecipeOf, { enabled, seeds, models, compiledSeeds: compiledSeedNodes });
  const compiled = assemble(scope, models, compiledSeedNodes, tests);
  return { root: scope.root, compiled, targetName: scope.profile.targetName, connection: scope.profile.connection };
}

/**
 * As `dbt build`: a model waits for the tests of the nodes it reads, and is skipped when one fails
 * (unless that test itself reads the model, which would be a cycle).
 */
function gateOnTests(models: readonly CompiledModel[], t: TestNodes): CompiledModel[] {
  const testsOn = new Map<string, CompiledTest[]>();
  for (const test of t.tests) {
    const on = t.attached.get(test.name);
    if (on !== undefined) testsOn.set(on, [...(testsOn.get(on) ?? []), test]);
  }
  return models.map((m) => {
    const extra = m.dependencies.flatMap((d) => (testsOn.get(lower(d)) ?? []).filter((test) => !test.dependencies.some((x) => lower(x) === lower(m.name))).map((test) => test.name));
    return extra.length === 0 ? m : { ...m, dependencies: [...m.dependencies, ...extra].sort() };
  });
}

/** The DAG in run order and the compiled project around it. */
function assemble(scope: DbtScope, models: readonly CompiledModel[], seeds: readonly CompiledSeed[], t: TestNodes): CompiledProject {
  const { profile, targetType, targetSchema, vars, req, logger } = scope;
  const all: CompiledNode[] = [...seeds, ...gateOnTests(models, t), ...t.tests];
  const byKey = new Map(all.map((n) => [lower(n.name), n]));
  const deps = new Map(all.map((n) => [lower(n.name), n.dependencies.map(lower)]));
  let order: string[];
  try {
    order = topoOrder(all.map((n) => n.name), deps);
  } catch (err) {
    throw EngineError.wrap('could not build dependency graph', err, 'compile');
  }
  const nodes = order.map((n) => byKey.get(lower(n))!);
  const disabled = new Set(scope.resources.models.filter((m) => m.config.enabled === false).map((m) => lower(m.name)));
  const index = new NodeIndex([
    ...models.map((m) => ({ name: m.name, kind: 'model' as const, file: m.source.file, naming: m.source.naming })),
    ...seeds.map((s) => ({ name: s.name, kind: 'seed' as const, file: s.source.file, naming: s.source.naming })),
  ]);
  const project: Project = {
    root: scope.root,
    config: emptyConfig(),
    settings: { naming: 'prod', target: profile.targetName, vars },
    models: models.map((m) => m.source),
    seeds: seeds.map((s) => s.source),
    macros: [],
    format: 'dbt',
  };
  return {
    project,
    nodes,
    graph: { nodes: nodes.map((n) => graphNode(n, req.fullRefresh === true)), deps, disabled },
    target: { name: profile.targetName, type: targetType },
    env: { engine: scope.engine, index, macros: { prefixFor: () => '' }, vars, target: { name: profile.targetName, type: targetType, schema: targetSchema }, logger, stepEnv: req.stepEnv },
  };
}
