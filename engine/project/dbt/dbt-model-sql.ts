/**
 * A dbt compile's model stages. Models render twice: first with placeholder
 * refs to learn each model's final config (a `{{ config() }}` call can change
 * its materialization, schema or alias), then — once every resource is named
 * and `graph` is filled — with every name known.
 */
import { EngineError } from '../../errors.js';
import { mergeConfig } from './config-tree.js';
import { checkConfigKeys, materializedMode, MODEL_KEYS, SNAPSHOT_KEYS } from './dbt-config.js';
import { DbtRelation } from './dbt-context.js';
import type { RenderState } from './dbt-render-types.js';
import { nameOf } from './dbt-naming.js';
import { dirsOf, lower, type SeedEntry } from './dbt-resources.js';
import type { DbtScope } from './dbt-scope.js';
import { persistDocs, type ModelEntry } from './model-entry.js';

/** Phase 1: each model's config, its file's config() calls merged over dbt_project.yml's and the properties'. */
export function learnConfigs(scope: DbtScope): void {
  for (const m of scope.resources.models) {
    const state: RenderState = { deps: new Set(), config: {} };
    // dbt's parse: `execute` is false and the database is not asked (refs are placeholders here).
    const p1 = (extra: Record<string, unknown>) => scope.render(`p1:${m.f.file}`, m.f.file, m.body, scope.env(scope.placeholderRef), state, { name: m.name, isIncremental: false, modelConfig: m.config }, extra);
    scope.gate.configs(m.f.file, p1, () => {
      const partial = state.config;
      state.config = {};
      return () => (state.config = partial);
    });
    m.config = mergeConfig(m.config, state.config);
    checkConfigKeys(m.f.file, m.config, m.snapshot ? SNAPSHOT_KEYS : MODEL_KEYS, scope.logger);
    if (!m.snapshot) materializedMode(m.f.file, m.config.materialized ?? 'view');
  }
}

/** Names the enabled models, snapshots and seeds, and fills templates' `graph` with them. */
export function nameResources(scope: DbtScope): { enabled: ModelEntry[]; seeds: SeedEntry[] } {
  const { pf } = scope;
  const enabled = scope.resources.models.filter((m) => m.config.enabled !== false);
  for (const m of enabled) {
    m.naming = nameOf(scope, m.name, m.config, m.snapshot ? 'snapshot' : 'model');
    m.relation = new DbtRelation(m.naming.database, m.naming.schema, m.naming.name);
  }
  const seeds = scope.resources.seedEntries.filter((s) => s.config.enabled !== false);
  for (const s of seeds) scope.seedNames.set(lower(s.name), nameOf(scope, s.name, s.config, 'seed'));
  scope.graph = {
    nodes: Object.fromEntries([
      ...enabled.map((m) => [`model.${pf.name}.${m.name}`, { unique_id: `model.${pf.name}.${m.name}`, name: m.name, resource_type: 'model', config: m.config, tags: m.config.tags ?? [], schema: m.naming!.schema, alias: m.naming!.name, original_file_path: m.f.file, fqn: [pf.name, ...dirsOf(m.f.rel), m.name] }]),
      ...seeds.map((s) => [`seed.${pf.name}.${s.name}`, { unique_id: `seed.${pf.name}.${s.name}`, name: s.name, resource_type: 'seed', config: s.config, original_file_path: s.f.file }]),
    ]),
    sources: Object.fromEntries(scope.props.sources.map((s) => [`source.${pf.name}.${s.source}.${s.name}`, { source_name: s.source, name: s.name, schema: scope.partsOf(s).schema, identifier: scope.partsOf(s).identifier }])),
  };
  Object.freeze(scope.graph);
  return { enabled, seeds };
}

function hookSql(scope: DbtScope, m: ModelEntry, key: 'pre_hook' | 'post_hook', state: RenderState): string[] {
  const list = (m.config[key] ?? []) as unknown[];
  return (Array.isArray(list) ? list : [list]).map((h, i) => {
    const text = typeof h === 'object' && h !== null ? String((h as { sql?: unknown }).sql ?? '') : String(h);
    return scope.render(`${key}:${m.f.file}:${i}`, m.f.file, text, scope.env(scope.finalRef), state, { name: m.name, this: m.relation, isIncremental: false, modelConfig: m.config });
  }).filter((s) => s !== '');
}

/** Phase 2: each enabled model's SQL (and incremental SQL), its refs and its hooks. */
export function renderModelSql(scope: DbtScope, enabled: readonly ModelEntry[]): void {
  for (const m of enabled) {
    const state: RenderState = { deps: new Set(), config: {} };
    const subject = { name: m.name, this: m.relation, isIncremental: false, modelConfig: m.config };
    // A trailing `;` (harmless to dbt) would break the statement the model is wrapped in.
    // As dbt parses: a model that asks the database renders with `execute` false here and again when it runs.
    // Ephemeral models are inlined into others' SQL, so they keep asking at load.
    const p2 = (st: RenderState, isIncremental: boolean) => {
      const once = (extra: Record<string, unknown>) => scope.render(`p2:${m.f.file}`, m.f.file, m.body, scope.env(scope.finalRef), st, { ...subject, isIncremental }, extra);
      if (m.config.materialized === 'ephemeral') return once({}).replace(/;\s*$/, '');
      const r = scope.gate.render(m.f.file, once, m.deferred === true);
      if (r.deferred) m.deferred = true;
      return r.out.replace(/;\s*$/, '');
    };
    m.sql = p2(state, false);
    if (m.config.materialized === 'incremental') m.incrementalSql = p2({ deps: new Set(), config: {} }, true);
    m.deps = state.deps;
    m.pre = hookSql(scope, m, 'pre_hook', state);
    m.post = [...hookSql(scope, m, 'post_hook', state), ...persistDocs(m)];
    // A model rendered again when it runs may be empty at parse (dbt_utils.union_relations is).
    if (m.sql === '' && !m.deferred) throw new EngineError('compile', `${m.f.file}: the model renders to no SQL`);
  }
}
