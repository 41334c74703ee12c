/**
 * The dbt loader: a directory with dbt_project.yml becomes the same compiled
 * DAG our own format produces (models, seeds and — here — one node per
 * test), so the runner does not know which format it came from.
 *
 * Models render twice: first with placeholder refs to learn each model's
 * final config (a `{{ config() }}` call can change its materialization,
 * schema or alias), then with every name known. Ephemeral models become
 * CTEs of the models that ref them.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Connection } from '../../connections/index.js';
import { graphNode, type CompiledModel, type CompiledNode, type CompiledProject, type CompiledSeed, type CompiledTest } from '../../compile/compile.js';
import { NodeIndex } from '../../compile/node-index.js';
import { topoOrder } from '../../dag/order.js';
import type { DbtModelRun } from '../../build-plan/node-task.js';
import { suggestions } from '../../suggest.js';
import { createNunjucksEngine } from '../../template/nunjucks-engine.js';
import { emptyConfig } from '../config.js';
import type { NodeName } from '../naming.js';
import type { StoredFailures } from '../data-tests.js';
import type { ModelSource, Project, SeedSource } from '../load.js';
import { mergeConfig, treeConfig } from './config-tree.js';
import { withScopes } from './macro-scopes.js';
import { cteRelation } from './relation.js';
import { CAPTURE, DbtRelation, dbtContext, type DbtEnv, type RenderState, type Resolved } from './dbt-context.js';
import { findDbtFiles } from './dbt-files.js';
import { loadMacros } from './dbt-macros.js';
import { loadDbtProjectFile } from './dbt-project-file.js';
import { auditRelationName, builtinTestSql, countSql, TEST_CONFIG_KEYS, testConfig, testedRelation, testNodeName } from './dbt-tests.js';
import { freshnessSql } from './freshness.js';
import { resolveProfile } from './profiles.js';
import { SyncQuery } from './sync-query.js';
import { emptyProperties, readProperties, type SourceTableProps, type TestDecl } from './properties.js';
import { incrementalRun, modelConfig, persistDocs, snapshotSpec, type ModelEntry } from './model-entry.js';
import { renderedProjectFile } from './project-config-jinja.js';
import { ParseGate } from './parse-gate.js';
import { injectCtes, liveRecipes, packValue, relationParts, type DbtLiveRecipe } from './live-render.js';
import { checkConfigKeys, materializedMode, SEED_KEYS, MODEL_KEYS, SNAPSHOT_KEYS } from './dbt-config.js';

export interface DbtBuildRequest {
  readonly path: string;
  readonly root: string;
  readonly target?: string;
  readonly profilesDir?: string;
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly stepEnv?: Readonly<Record<string, string>>;
  readonly fullRefresh?: boolean;
}

export interface DbtBuild {
  readonly root: string;
  readonly compiled: CompiledProject;
  readonly targetName: string;
  readonly connection: Connection;
}


const dirsOf = (rel: string) => (rel.includes('/') ? rel.split('/').slice(0, -1) : []);
const lower = (s: string) => s.toLowerCase();

export function compileDbtBuild(req: DbtBuildRequest, logger: Logger): DbtBuild {
  const closers: (() => void)[] = [];
  try {
    return compileDbt(req, logger, closers);
  } finally {
    for (const close of closers) close();
  }
}

function compileDbt(req: DbtBuildRequest, logger: Logger, closers: (() => void)[]): DbtBuild {
  const root = req.root;
  const pf0 = loadDbtProjectFile(root, logger);
  const profile = resolveProfile(root, pf0.profile, { profilesDir: req.profilesDir, target: req.target, stepEnv: req.stepEnv });
  const targetType = profile.connection.type as 'postgres' | 'duckdb';
  const targetSchema = String(profile.target.schema);
  // vars: global keys, then the ones scoped to this project's name, then --vars.
  const scoped = pf0.vars[pf0.name];
  const vars = { ...pf0.vars, ...(scoped && typeof scoped === 'object' && !Array.isArray(scoped) ? (scoped as Record<string, unknown>) : {}), ...(req.vars ?? {}) };
  const engine = createNunjucksEngine();
  const pf = renderedProjectFile(pf0, engine, { vars, target: profile.target, stepEnv: req.stepEnv });
  const files = findDbtFiles(root, pf, logger);
  if (pf.onRunStart.length + pf.onRunEnd.length > 0) logger.log('warn', 'dbt_project.yml: on-run-start/on-run-end hooks are not supported by service build and are not run');
  const props = emptyProperties();
  for (const f of files.properties) readProperties(props, f.abs, f.file, logger);
  const macros = loadMacros(root, files.macros, files.tests, logger, { projectName: pf.name, dispatch: pf.dispatch });

  for (const s of props.sources) {
    if (s.freshness && (s.freshness.warn_after || s.freshness.error_after)) {
      if (!s.loadedAtField) throw new EngineError('load', `${s.file}: source '${s.source}.${s.name}': freshness needs loaded_at_field`);
      logger.log('debug', `${s.file}: source '${s.source}.${s.name}': freshness is checked by \`service build test --freshness\``);
    }
  }

  // --- resources ---
  const seen = new Map<string, string>();
  const claim = (name: string, file: string) => {
    const prev = seen.get(lower(name));
    if (prev) throw new EngineError('load', `duplicate name '${name}': found in both '${prev}' and '${file}'`);
    seen.set(lower(name), file);
  };
  const models: ModelEntry[] = files.models.map((f) => {
    claim(f.stem, f.file);
    const p = props.models.get(lower(f.stem));
    const tree = treeConfig(pf.models, pf.name, [...dirsOf(f.rel), f.stem], MODEL_KEYS);
    return { f, name: f.stem, body: readFileSync(f.abs, 'utf8'), ...(p ? { props: p } : {}), config: mergeConfig(tree, p?.config ?? {}) };
  });
  for (const f of files.snapshots) {
    const text = readFileSync(f.abs, 'utf8');
    const blocks = [...text.matchAll(/\{%-?\s*snapshot\s+([A-Za-z_][A-Za-z0-9_]*)\s*-?%\}([\s\S]*?)\{%-?\s*endsnapshot\s*-?%\}/g)];
    if (blocks.length === 0) logger.log('warn', `${f.file}: not used (no {% snapshot %} block)`);
    for (const b of blocks) {
      const name = b[1]!;
      claim(name, f.file);
      const p = props.snapshots.get(lower(name));
      const tree = treeConfig(pf.snapshots, pf.name, [...dirsOf(f.rel), name], SNAPSHOT_KEYS);
      models.push({ f, name, body: b[2]!, snapshot: true, ...(p ? { props: p } : {}), config: mergeConfig(tree, p?.config ?? {}) });
    }
  }
  for (const [k, p] of props.models) if (!models.some((m) => lower(m.name) === k)) logger.log('warn', `${p.file}: model '${p.name}' is described but no model file defines it`);
  const seedEntries = files.seeds.map((f) => {
    claim(f.stem, f.file);
    const p = props.seeds.get(lower(f.stem));
    const config = mergeConfig(treeConfig(pf.seeds, pf.name, [...dirsOf(f.rel), f.stem], SEED_KEYS), p?.config ?? {});
    checkConfigKeys(f.file, config, SEED_KEYS, logger);
    return { f, name: f.stem, props: p, config };
  });
  const byName = new Map(models.map((m) => [lower(m.name), m]));

  // --- naming (dbt's generate_schema_name / generate_alias_name, or a project's override) ---
  const macroCall = (macro: string, args: Record<string, unknown>): string => {
    const state: RenderState = { deps: new Set(), config: {} };
    const ctx = dbtContext(env(placeholderRef), { name: macro, file: 'macros', isIncremental: false }, state);
    Object.assign(ctx, withScopes(engine, macros, state, ctx), { __args: args });
    return engine.render(`__naming_${macro}`, `${CAPTURE}{{ ${macro}(__args.custom, __args.node) }}`, ctx, macro, macros.prefix).trim();
  };
  const schemaFor = (custom: unknown, node: Record<string, unknown>): string => {
    if (macros.projectMacros.has('generate_schema_name')) return macroCall('generate_schema_name', { custom: custom ?? null, node });
    return custom === undefined || custom === null || custom === '' ? targetSchema : `${targetSchema}_${String(custom).trim()}`;
  };
  const aliasFor = (custom: unknown, node: Record<string, unknown>): string => {
    if (macros.projectMacros.has('generate_alias_name')) return macroCall('generate_alias_name', { custom: custom ?? null, node });
    return custom === undefined || custom === null || custom === '' ? String(node.name) : String(custom);
  };
  const nameOf = (name: string, config: Record<string, unknown>, resource: string): NodeName => {
    const node = { name, resource_type: resource, config, unique_id: `${resource}.${pf.name}.${name}` };
    // A snapshot's target_schema is used as written (dbt's legacy form); schema: goes through generate_schema_name.
    const schema = resource === 'snapshot' && config.target_schema ? String(config.target_schema) : schemaFor(config.schema, node);
    const alias = aliasFor(config.alias, node);
    const dbc = config.target_database ?? config.database;
    const db = dbc === undefined || dbc === null ? undefined : String(dbc);
    if (db !== undefined && targetType === 'postgres' && db !== profile.target.database) throw new EngineError('compile', `${resource} '${name}': database '${db}' differs from the profile's dbname; postgres cannot write across databases`);
    const database = targetType === 'duckdb' ? db : undefined;
    const full = `${database ? `${database}.` : ''}${schema}.${alias}`;
    return { ...(database ? { database } : {}), schema, name: alias, prodName: full, fullName: full };
  };

  // --- sources ---
  const sources = new Map(props.sources.map((s) => [`${lower(s.source)}.${lower(s.name)}`, s]));
  // schema, database and identifier may be Jinja (`{{ target.schema }}_raw`), rendered once.
  const sourceParts = new Map<SourceTableProps, { schema: string; identifier: string; database?: string }>();
  const jinjaField = (s: SourceTableProps, v: string) => (v.includes('{{') ? render(`src:${v}`, s.file, v, env(placeholderRef), { deps: new Set(), config: {} }, { name: s.name, isIncremental: false }) : v);
  const partsOf = (s: SourceTableProps) => {
    let p = sourceParts.get(s);
    if (!p) {
      p = { schema: jinjaField(s, s.schema), identifier: jinjaField(s, s.identifier), ...(s.database ? { database: jinjaField(s, s.database) } : {}) };
      sourceParts.set(s, p);
    }
    return p;
  };
  const sourceRelation = (s: SourceTableProps) => {
    const p = partsOf(s);
    return new DbtRelation(targetType === 'duckdb' ? p.database : undefined, p.schema, p.identifier);
  };

  // --- render contexts ---
  const now = new Date();
  const invocationId = randomUUID();
  let graph: Record<string, unknown> = { nodes: {}, sources: {} };
  let queries: SyncQuery | undefined;
  const gate = new ParseGate(logger);
  closers.push(() => queries?.close());
  const refMiss = (name: string, from: string): never => {
    const hint = suggestions(name, [...models.map((m) => ({ name: m.name, file: m.f.file })), ...seedEntries.map((s) => ({ name: s.name, file: s.f.file }))]);
    throw new EngineError('compile', `${from}: ref('${name}') not found.${hint}`);
  };
  function placeholderRef(name: string, _pkg: string | undefined, from: string): Resolved {
    if (!byName.has(lower(name)) && !seedEntries.some((s) => lower(s.name) === lower(name))) refMiss(name, from);
    return { key: lower(name), value: new DbtRelation(undefined, '__pending__', name) };
  }
  const seedNames = new Map<string, NodeName>();
  function finalRef(name: string, _pkg: string | undefined, from: string): Resolved {
    const m = byName.get(lower(name));
    if (m) {
      if (m.config.enabled === false) throw new EngineError('compile', `${from}: ref('${name}') points at a disabled model`);
      if (m.config.materialized === 'ephemeral') return { key: lower(name), value: cteRelation(m.name) };
      return { key: lower(name), value: m.relation! };
    }
    const s = seedNames.get(lower(name));
    if (s) return { key: lower(name), value: new DbtRelation(s.database, s.schema, s.name) };
    return refMiss(name, from);
  }
  function env(ref: DbtEnv['ref']): DbtEnv {
    return {
      file: (n) => n,
      ref,
      source: (src, table, from) => {
        const s = sources.get(`${lower(src)}.${lower(table)}`);
        if (!s) throw new EngineError('compile', `${from}: source('${src}', '${table}') is not declared in any sources: block`);
        return { key: `source:${lower(src)}.${lower(table)}`, value: sourceRelation(s) };
      },
      vars,
      target: profile.target,
      logger: gate.templateLogger,
      stepEnv: req.stepEnv,
      now,
      graph,
      projectName: pf.name,
      fullRefresh: req.fullRefresh === true,
      invocationId,
      query: (sql) => {
        const parsed = gate.intercept();
        if (parsed) return parsed;
        queries ??= new SyncQuery(profile.connection);
        logger.log('debug', `compile-time query: ${sql}`);
        return queries.query(sql);
      },
    };
  }
  const render = (cacheKey: string, file: string, body: string, e: DbtEnv, state: RenderState, subject: { name: string; this?: DbtRelation; isIncremental: boolean; modelConfig?: Record<string, unknown> }, extra: Record<string, unknown> = {}): string => {
    const ctx = dbtContext(e, { ...subject, file }, state);
    // `execute: false` (a parse) must be in the context the package scopes inherit.
    if ('execute' in extra) ctx.execute = extra.execute;
    Object.assign(ctx, withScopes(engine, macros, state, ctx), extra);
    return engine.render(cacheKey, CAPTURE + body, ctx, file, macros.prefix).trim();
  };

  // --- phase 1: configs ---
  for (const m of models) {
    const state: RenderState = { deps: new Set(), config: {} };
    // dbt's parse: `execute` is false and the database is not asked (refs are placeholders here).
    const p1 = (extra: Record<string, unknown>) => render(`p1:${m.f.file}`, m.f.file, m.body, env(placeholderRef), state, { name: m.name, isIncremental: false, modelConfig: m.config }, extra);
    gate.configs(m.f.file, p1, () => {
      const partial = state.config;
      state.config = {};
      return () => (state.config = partial);
    });
    m.config = mergeConfig(m.config, state.config);
    checkConfigKeys(m.f.file, m.config, m.snapshot ? SNAPSHOT_KEYS : MODEL_KEYS, logger);
    if (!m.snapshot) materializedMode(m.f.file, m.config.materialized ?? 'view');
  }
  const enabled = models.filter((m) => m.config.enabled !== false);
  for (const m of enabled) {
    m.naming = nameOf(m.name, m.config, m.snapshot ? 'snapshot' : 'model');
    m.relation = new DbtRelation(m.naming.database, m.naming.schema, m.naming.name);
  }
  const seeds = seedEntries.filter((s) => s.config.enabled !== false);
  for (const s of seeds) seedNames.set(lower(s.name), nameOf(s.name, s.config, 'seed'));
  graph = {
    nodes: Object.fromEntries([
      ...enabled.map((m) => [`model.${pf.name}.${m.name}`, { unique_id: `model.${pf.name}.${m.name}`, name: m.name, resource_type: 'model', config: m.config, tags: m.config.tags ?? [], schema: m.naming!.schema, alias: m.naming!.name, original_file_path: m.f.file, fqn: [pf.name, ...dirsOf(m.f.rel), m.name] }]),
      ...seeds.map((s) => [`seed.${pf.name}.${s.name}`, { unique_id: `seed.${pf.name}.${s.name}`, name: s.name, resource_type: 'seed', config: s.config, original_file_path: s.f.file }]),
    ]),
    sources: Object.fromEntries(props.sources.map((s) => [`source.${pf.name}.${s.source}.${s.name}`, { source_name: s.source, name: s.name, schema: partsOf(s).schema, identifier: partsOf(s).identifier }])),
  };
  Object.freeze(graph);

  // --- phase 2: SQL with every name known ---
  const hookSql = (m: ModelEntry, key: 'pre_hook' | 'post_hook', state: RenderState): string[] => {
    const list = (m.config[key] ?? []) as unknown[];
    return (Array.isArray(list) ? list : [list]).map((h, i) => {
      const text = typeof h === 'object' && h !== null ? String((h as { sql?: unknown }).sql ?? '') : String(h);
      return render(`${key}:${m.f.file}:${i}`, m.f.file, text, env(finalRef), state, { name: m.name, this: m.relation, isIncremental: false, modelConfig: m.config });
    }).filter((s) => s !== '');
  };
  for (const m of enabled) {
    const state: RenderState = { deps: new Set(), config: {} };
    const subject = { name: m.name, this: m.relation, isIncremental: false, modelConfig: m.config };
    // A trailing `;` (harmless to dbt) would break the statement the model is wrapped in.
    // As dbt parses: a model that asks the database renders with `execute` false here and again when it runs.
    // Ephemeral models are inlined into others' SQL, so they keep asking at load.
    const p2 = (st: RenderState, isIncremental: boolean) => {
      const once = (extra: Record<string, unknown>) => render(`p2:${m.f.file}`, m.f.file, m.body, env(finalRef), st, { ...subject, isIncremental }, extra);
      if (m.config.materialized === 'ephemeral') return once({}).replace(/;\s*$/, '');
      const r = gate.render(m.f.file, once, m.deferred === true);
      if (r.deferred) m.deferred = true;
      return r.out.replace(/;\s*$/, '');
    };
    m.sql = p2(state, false);
    if (m.config.materialized === 'incremental') m.incrementalSql = p2({ deps: new Set(), config: {} }, true);
    m.deps = state.deps;
    m.pre = hookSql(m, 'pre_hook', state);
    m.post = [...hookSql(m, 'post_hook', state), ...persistDocs(m)];
    // A model rendered again when it runs may be empty at parse (dbt_utils.union_relations is).
    if (m.sql === '' && !m.deferred) throw new EngineError('compile', `${m.f.file}: the model renders to no SQL`);
  }

  // Ephemeral models: their SQL goes into dependents as CTEs, their dependencies become the dependents'.
  const isEphemeral = (k: string) => byName.get(k)?.config.materialized === 'ephemeral';
  const cteOrder = (m: Pick<ModelEntry, 'deps'>, out: string[] = [], stack: string[] = []): string[] => {
    for (const d of m.deps ?? []) {
      if (!isEphemeral(d) || out.includes(d)) continue;
      if (stack.includes(d)) throw new EngineError('compile', `ephemeral models ref each other in a cycle: ${[...stack, d].join(' -> ')}`);
      cteOrder(byName.get(d)!, out, [...stack, d]);
      out.push(d);
    }
    return out;
  };
  const cteDefs = (m: Pick<ModelEntry, 'deps'>): string => cteOrder(m).map((k) => `__dbt__cte__${byName.get(k)!.name} as (\n${byName.get(k)!.sql}\n)`).join(',\n');
  const withCtes = (m: Pick<ModelEntry, 'deps'>, sql: string): string => injectCtes(cteDefs(m), sql);
  // The table a relation is: sources produced inside the project (a seed, a model) depend on that node.
  const byRelation = new Map<string, string>();
  for (const m of enabled) if (!isEphemeral(lower(m.name))) byRelation.set(lower(`${m.naming!.schema}.${m.naming!.name}`), m.name);
  for (const s of seeds) byRelation.set(lower(`${seedNames.get(lower(s.name))!.schema}.${seedNames.get(lower(s.name))!.name}`), s.name);
  const nodeDeps = (keys: Iterable<string>, self: string): string[] => {
    const out = new Set<string>();
    const add = (k: string, seenE: Set<string>) => {
      if (k.startsWith('source:')) {
        const s = sources.get(k.slice(7))!;
        const n = byRelation.get(lower(`${partsOf(s).schema}.${partsOf(s).identifier}`));
        if (n && lower(n) !== self) out.add(n);
        return;
      }
      if (isEphemeral(k)) {
        if (seenE.has(k)) return;
        seenE.add(k);
        for (const d of byName.get(k)!.deps ?? []) add(d, seenE);
        return;
      }
      const n = byName.get(k)?.name ?? seeds.find((s) => lower(s.name) === k)?.name;
      if (n && lower(n) !== self) out.add(n);
    };
    const seenE = new Set<string>();
    for (const k of keys) add(k, seenE);
    return [...out].sort();
  };

  const liveRecipeOf = liveRecipes(() => ({
    macros,
    refs: Object.fromEntries([
      ...enabled.map((e) => [lower(e.name), isEphemeral(lower(e.name)) ? `__dbt__cte__${e.name}` : relationParts(e.relation!)] as const),
      ...seeds.map((s) => [lower(s.name), relationParts(finalRef(s.name, undefined, s.f.file).value as DbtRelation)] as const),
    ]),
    sources: Object.fromEntries(props.sources.map((s) => [`${lower(s.source)}.${lower(s.name)}`, relationParts(sourceRelation(s))])),
    vars,
    target: profile.target,
    ...(req.stepEnv ? { stepEnv: req.stepEnv } : {}),
    graph,
    projectName: pf.name,
    fullRefresh: req.fullRefresh === true,
    invocationId,
    now: now.toISOString(),
  }));
  const liveRecipe = (m: ModelEntry): DbtLiveRecipe =>
    liveRecipeOf(m.name, m.f.file, m.body, cteDefs(m), { this: relationParts(m.relation!), modelConfig: m.config, incremental: m.config.materialized === 'incremental' });
  const compiledModels: CompiledModel[] = enabled
    .filter((m) => !isEphemeral(lower(m.name)))
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
        sql: withCtes(m, m.sql!),
        pre: m.pre!,
        post: m.post!,
        dependencies: nodeDeps(m.deps!, lower(m.name)),
        template: m.body,
        templatePrefix: '',
        ...(run ? { dbt: { ...run, ...(run.incrementalSql ? { incrementalSql: withCtes(m, run.incrementalSql) } : {}) } } : {}),
        ...(m.deferred ? { live: liveRecipe(m) } : {}),
      };
    });
  const compiledSeeds: CompiledSeed[] = seeds.map((s) => {
    const naming = seedNames.get(lower(s.name))!;
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

  // --- tests ---
  const tests: CompiledTest[] = [];
  const testNames = new Set<string>();
  /** Test name → the node it tests (models and seeds): what dbt build waits on before that node's children. */
  const attached = new Map<string, string>();
  /** dbt's store_failures: the failing rows kept in `<schema>_dbt_test__audit.<test name>` (the test's `schema`/`alias` config name it otherwise). */
  const storedFailures = (name: string, cfg: ReturnType<typeof testConfig>): { store?: StoredFailures } => {
    if (cfg.storeAs === undefined) return {};
    const n = nameOf(name, { ...cfg.raw, schema: cfg.raw.schema ?? 'dbt_test__audit' }, 'test');
    return { store: { relation: { ...(n.database ? { database: n.database } : {}), schema: n.schema, name: auditRelationName(n.name) }, as: cfg.storeAs, failCalc: cfg.failCalc } };
  };
  const addTest = (name0: string, file: string, sql: string, cfg: ReturnType<typeof testConfig>, deps: string[], on: NodeName, label: string, attachedTo?: string, live?: (name: string) => DbtLiveRecipe) => {
    let name = name0;
    for (let i = 2; testNames.has(lower(name)); i++) name = `${name0}_${i}`;
    testNames.add(lower(name));
    if (attachedTo !== undefined) attached.set(name, attachedTo);
    tests.push({
      kind: 'test',
      name,
      source: { kind: 'test', name, file, rel: file, naming: on, tags: cfg.tags },
      dependencies: [...new Set(deps)].sort(),
      test: { kind: 'sql', sql: countSql(sql, cfg.failCalc, cfg.limit), label, severity: cfg.severity, warnIf: cfg.warnIf, errorIf: cfg.errorIf, ...storedFailures(name, cfg) },
      ...(live ? { live: live(name) } : {}),
    });
  };
  const genericTest = (decl: TestDecl, onName: string, relation: DbtRelation | string, on: NodeName, baseDeps: Iterable<string>, self: string, attachedTo?: string) => {
    const cfg = testConfig(decl, treeConfig(pf.tests, pf.name, [], new Set()), (msg) => logger.log('warn', `${decl.file}: test '${decl.test}' on '${onName}': ${msg}`));
    if (!cfg.enabled) return;
    const state: RenderState = { deps: new Set(baseDeps), config: {} };
    const e = env(finalRef);
    // Test arguments are Jinja as in dbt: `to: ref('x')`, `values: "{{ var('list') }}"` (a whole `{{ … }}` keeps its value's type).
    const expr = (v: unknown): unknown => {
      if (typeof v !== 'string') return v;
      const whole = /^\s*\{\{([\s\S]*)\}\}\s*$/.exec(v)?.[1] ?? (/^\s*(ref|source)\s*\(/.test(v) ? v : undefined);
      if (whole === undefined) return v.includes('{{') ? render(`arg:${v}`, decl.file, v, e, state, { name: onName, isIncremental: false }) : v;
      let value: unknown;
      render(`argv:${whole}`, decl.file, `{{ __native(${whole}) }}`, e, state, { name: onName, isIncremental: false }, { __native: (x: unknown) => ((value = x), '') });
      return value; // a Relation stays one: test macros call its methods (dbt_utils.equality)
    };
    const nodeName = testNodeName(decl, onName); // named from the arguments as written, as dbt does
    decl = { ...decl, args: Object.fromEntries(Object.entries(decl.args).map(([k, v]) => [k, k === 'config' ? v : expr(v)])) };
    const model = testedRelation(String(relation), cfg.where);
    const column = decl.column ?? (typeof decl.args.column_name === 'string' ? decl.args.column_name : undefined);
    const testName = decl.test.split('.').pop()!;
    let sql: string | undefined;
    let live: ((name: string) => DbtLiveRecipe) | undefined;
    // A test macro's own config() (dbt_utils sets fail_calc so) is the default under the properties file's config.
    const ownConfig = () => {
      const own = (k: string) => (cfg.raw[k] === undefined && state.config[k] !== undefined ? String(state.config[k]) : undefined);
      return { ...cfg, failCalc: own('fail_calc') ?? cfg.failCalc, warnIf: own('warn_if') ?? cfg.warnIf, errorIf: own('error_if') ?? cfg.errorIf };
    };
    try {
      sql = builtinTestSql(testName, model, column, decl.args, decl.test === 'relationships' ? String(decl.args.to) : undefined);
    } catch (err) {
      throw new EngineError('compile', `${decl.file}: test '${decl.test}' on '${onName}': ${(err as Error).message}`);
    }
    if (sql === undefined) {
      const macro = `test_${testName}`;
      const pkg = decl.test.includes('.') ? decl.test.split('.')[0] : undefined;
      if (!(pkg === undefined ? macros.projectMacros.has(macro) || [...macros.namespaces.values()].some((n) => n.includes(macro)) : macros.namespaces.get(pkg)?.includes(macro))) {
        throw new EngineError('compile', `${decl.file}: test '${decl.test}' on '${onName}': no generic test named '${decl.test}' (define it with {% test ${testName}(model, column_name) %} in a macro or test folder, or install its package)`);
      }
      // Config keys written beside the arguments (`where:`, `error_if:` …) are config, not macro arguments, as in dbt.
      const args = Object.fromEntries(Object.entries(decl.args).filter(([k]) => k !== 'config' && !TEST_CONFIG_KEYS.has(k)));
      // dbt hands a generic test its model as a Relation (a `where` config makes it a subquery string).
      const invoke = { __test_macro: macro, __test_pkg: pkg, __test_args: { model: cfg.where === undefined ? relation : model, ...(column !== undefined ? { column_name: column } : {}), ...args } };
      const body = '{{ __dbt_invoke(__test_macro, __test_args, __test_pkg) }}';
      const r = gate.render(decl.file, (extra) => render(`test:${decl.file}:${onName}:${decl.column ?? ''}:${decl.test}`, decl.file, body, e, state, { name: onName, isIncremental: false, modelConfig: cfg.raw }, { ...invoke, ...extra }));
      sql = r.out;
      if (r.deferred) live = (name) => liveRecipeOf(name, decl.file, body, cteDefs({ deps: state.deps }), { extra: packValue(invoke) as Record<string, unknown>, countWith: ownConfig().failCalc, ...(cfg.limit !== undefined ? { countLimit: cfg.limit } : {}), modelConfig: cfg.raw });
    }
    // A test that reads an ephemeral model (the tested one, or through ref) gets its SQL as CTEs, as in dbt.
    addTest(nodeName, decl.file, withCtes({ deps: state.deps }, sql), ownConfig(), nodeDeps(state.deps, self), on, nodeName, attachedTo, live);
  };
  // An ephemeral model has no relation: its tests run on its inlined CTE and wait for what it reads.
  for (const m of enabled) {
    if (!isEphemeral(lower(m.name))) continue;
    for (const decl of m.props?.tests ?? []) genericTest(decl, m.name, cteRelation(m.name), m.naming!, [lower(m.name)], '');
  }
  for (const m of compiledModels) {
    const entry = byName.get(lower(m.name))!;
    if (entry.snapshot && entry.props === undefined) continue;
    for (const decl of entry.props?.tests ?? []) genericTest(decl, m.name, entry.relation!, m.source.naming, [lower(m.name)], '', lower(m.name));
  }
  for (const s of compiledSeeds) {
    const entry = seeds.find((x) => x.name === s.name)!;
    for (const decl of entry.props?.tests ?? []) genericTest(decl, s.name, new DbtRelation(s.source.naming.database, s.source.naming.schema, s.source.naming.name), s.source.naming, [lower(s.name)], '', lower(s.name));
  }
  for (const src of props.sources) {
    const rel = sourceRelation(src);
    const sp = partsOf(src);
    const on: NodeName = { schema: sp.schema, name: sp.identifier, prodName: `${sp.schema}.${sp.identifier}`, fullName: `${sp.schema}.${sp.identifier}` };
    for (const decl of src.tests) genericTest(decl, `source_${src.source}_${src.name}`, rel, on, [`source:${lower(src.source)}.${lower(src.name)}`], '');
  }
  // Source freshness: one check per source table with warn_after/error_after (`build test --freshness`).
  for (const src of props.sources) {
    const q = freshnessSql(src, sourceRelation(src).toString(), now);
    if (q === undefined) continue;
    const sp = partsOf(src);
    const name = `source_freshness_${src.source}_${src.name}`;
    testNames.add(lower(name));
    tests.push({
      kind: 'test',
      name,
      source: { kind: 'test', name, file: src.file, rel: src.file, naming: { schema: sp.schema, name: sp.identifier, prodName: `${sp.schema}.${sp.identifier}`, fullName: `${sp.schema}.${sp.identifier}` }, tags: [] },
      dependencies: nodeDeps([`source:${lower(src.source)}.${lower(src.name)}`], ''),
      test: { kind: 'sql', sql: q, label: name, severity: 'error', warnIf: '>=1', errorIf: '>=2' },
      freshness: true,
    });
  }
  for (const f of files.tests) {
    const body = readFileSync(f.abs, 'utf8');
    if (/\{%-?\s*test\s/.test(body)) continue; // generic test definitions, loaded as macros
    const state: RenderState = { deps: new Set(), config: {} };
    const r = gate.render(f.file, (extra) => render(`singular:${f.file}`, f.file, body, env(finalRef), state, { name: f.stem, isIncremental: false }, extra));
    const sql = r.out;
    const cfg = testConfig({ test: f.stem, args: { config: state.config }, file: f.file }, treeConfig(pf.tests, pf.name, [...dirsOf(f.rel), f.stem], new Set()), (msg) => logger.log('warn', `${f.file}: ${msg}`));
    if (!cfg.enabled) continue;
    // A singular test reads whatever it refs: its lines name its file.
    const on: NodeName = { schema: targetSchema, name: f.stem, prodName: f.file, fullName: f.file };
    const live = r.deferred ? (name: string) => liveRecipeOf(name, f.file, body, cteDefs({ deps: state.deps }), { countWith: cfg.failCalc, ...(cfg.limit !== undefined ? { countLimit: cfg.limit } : {}) }) : undefined;
    addTest(f.stem, f.file, withCtes({ deps: state.deps }, sql.replace(/;\s*$/, '')), cfg, nodeDeps(state.deps, ''), on, f.stem, undefined, live);
  }

  // --- the DAG ---
  // As `dbt build`: a model waits for the tests of the nodes it reads, and is skipped when one fails
  // (unless that test itself reads the model, which would be a cycle).
  const testsOn = new Map<string, CompiledTest[]>();
  for (const t of tests) {
    const on = attached.get(t.name);
    if (on !== undefined) testsOn.set(on, [...(testsOn.get(on) ?? []), t]);
  }
  const gated = compiledModels.map((m) => {
    const extra = m.dependencies.flatMap((d) => (testsOn.get(lower(d)) ?? []).filter((t) => !t.dependencies.some((x) => lower(x) === lower(m.name))).map((t) => t.name));
    return extra.length === 0 ? m : { ...m, dependencies: [...m.dependencies, ...extra].sort() };
  });
  const all: CompiledNode[] = [...compiledSeeds, ...gated, ...tests];
  const byKey = new Map(all.map((n) => [lower(n.name), n]));
  const deps = new Map(all.map((n) => [lower(n.name), n.dependencies.map(lower)]));
  let order: string[];
  try {
    order = topoOrder(all.map((n) => n.name), deps);
  } catch (err) {
    throw EngineError.wrap('could not build dependency graph', err, 'compile');
  }
  const nodes = order.map((n) => byKey.get(lower(n))!);
  const disabled = new Set(models.filter((m) => m.config.enabled === false).map((m) => lower(m.name)));
  const index = new NodeIndex([
    ...compiledModels.map((m) => ({ name: m.name, kind: 'model' as const, file: m.source.file, naming: m.source.naming })),
    ...compiledSeeds.map((s) => ({ name: s.name, kind: 'seed' as const, file: s.source.file, naming: s.source.naming })),
  ]);
  const project: Project = {
    root,
    config: emptyConfig(),
    settings: { naming: 'prod', target: profile.targetName, vars },
    models: compiledModels.map((m) => m.source),
    seeds: compiledSeeds.map((s) => s.source),
    macros: [],
    format: 'dbt',
  };
  const compiled: CompiledProject = {
    project,
    nodes,
    graph: { nodes: nodes.map((n) => graphNode(n, req.fullRefresh === true)), deps, disabled },
    target: { name: profile.targetName, type: targetType },
    env: { engine, index, macros: { prefixFor: () => '' }, vars, target: { name: profile.targetName, type: targetType, schema: targetSchema }, logger, stepEnv: req.stepEnv },
  };
  return { root, compiled, targetName: profile.targetName, connection: profile.connection };

}
