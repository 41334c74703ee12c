/**
 * Models, snapshots and seeds of a dbt project as the compiled nodes our
 * runner takes (ephemeral models are not nodes: they are CTEs of their
 * readers), and the recipe a node whose render asked the database is
 * rendered again with when it runs (live-render.ts).
 */
import type { CompiledModel, CompiledSeed } from '../../compile/compile.js';
import type { DbtModelRun } from '../../build-plan/node-task.js';
import type { ModelSource, SeedSource } from '../load.js';
import type { DbtRelation } from './dbt-context.js';
import { materializedMode } from './dbt-config.js';
import { liveRecipes, relationParts, type DbtLiveRecipe } from './live-render.js';
import { incrementalRun, modelConfig, snapshotSpec, type ModelEntry } from './model-entry.js';
import type { NodeDeps } from './dbt-node-deps.js';
import { lower, type SeedEntry } from './dbt-resources.js';
import type { DbtScope } from './dbt-scope.js';

export type LiveRecipeOf = ReturnType<typeof liveRecipes>;

/** The live recipes' shared part (refs, sources, vars …), built on first use. */
export function liveRecipeMaker(scope: DbtScope, enabled: readonly ModelEntry[], seeds: readonly SeedEntry[], deps: NodeDeps): LiveRecipeOf {
  const { req } = scope;
  return liveRecipes(() => ({
    macros: scope.macros,
    refs: Object.fromEntries([
      ...enabled.map((e) => [lower(e.name), deps.isEphemeral(lower(e.name)) ? `__dbt__cte__${e.name}` : relationParts(e.relation!)] as const),
      ...seeds.map((s) => [lower(s.name), relationParts(scope.finalRef(s.name, undefined, s.f.file).value as DbtRelation)] as const),
    ]),
    sources: Object.fromEntries(scope.props.sources.map((s) => [`${lower(s.source)}.${lower(s.name)}`, relationParts(scope.sourceRelation(s))])),
    vars: scope.vars,
    target: scope.profile.target,
    ...(req.stepEnv ? { stepEnv: req.stepEnv } : {}),
    graph: scope.graph,
    projectName: scope.pf.name,
    fullRefresh: req.fullRefresh === true,
    invocationId: scope.invocationId,
    now: scope.now.toISOString(),
  }));
}

export function compiledModels(enabled: readonly ModelEntry[], deps: NodeDeps, liveRecipeOf: LiveRecipeOf): CompiledModel[] {
  const liveRecipe = (m: ModelEntry): DbtLiveRecipe =>
    liveRecipeOf(m.name, m.f.file, m.body, deps.cteDefs(m), { this: relationParts(m.relation!), modelConfig: m.config, incremental: m.config.materialized === 'incremental' });
  return enabled
    .filter((m) => !deps.isEphemeral(lower(m.name)))
    .map((m) => {
      const mode = m.snapshot ? 'full-refresh' : materializedMode(m.f.file, m.config.materialized ?? 'view');
      const config = modelConfig(m, mode);
      const source: ModelSource = { kind: 'model', name: m.name, file: m.f.file, rel: m.f.rel, abs: m.f.abs, naming: m.naming!, hasFrontMatter: false, body: m.body, config, style: 'dbt', dbtProject: true, tests: [] };
      const run: DbtModelRun | undefined = m.snapshot ? { strategy: 'append', onSchemaChange: 'ignore', snapshot: snapshotSpec(m) } : mode === 'incremental' ? incrementalRun(m) : undefined;
      return {
        kind: 'model',
        name: m.name,
        source,
        config,
        tests: [],
        sql: deps.withCtes(m, m.sql!),
        pre: m.pre!,
        post: m.post!,
        dependencies: deps.nodeDeps(m.deps!, lower(m.name)),
        template: m.body,
        templatePrefix: '',
        ...(run ? { dbt: { ...run, ...(run.incrementalSql ? { incrementalSql: deps.withCtes(m, run.incrementalSql) } : {}) } } : {}),
        ...(m.deferred ? { live: liveRecipe(m) } : {}),
      };
    });
}

export function compiledSeeds(scope: DbtScope, seeds: readonly SeedEntry[]): CompiledSeed[] {
  return seeds.map((s) => {
    const naming = scope.seedNames.get(lower(s.name))!;
    const source: SeedSource = { kind: 'seed', name: s.name, file: s.f.file, rel: s.f.rel, abs: s.f.abs, format: 'csv', naming };
    const types = (s.config.column_types ?? {}) as Record<string, unknown>;
    return {
      kind: 'seed',
      name: s.name,
      source,
      dependencies: [],
      dbt: {
        ...(s.config.delimiter !== undefined ? { delimiter: String(s.config.delimiter) } : {}),
        ...(s.config.quote_columns === false ? { foldColumns: true } : {}),
        columnTypes: Object.fromEntries(Object.entries(types).map(([k, v]) => [s.config.quote_columns === false ? lower(k) : k, String(v)])),
        dropCascade: true,
      },
    };
  });
}
