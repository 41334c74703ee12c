/**
 * A dbt project's tests as compiled test nodes: generic tests declared in
 * properties files (on models, snapshots, seeds, sources and ephemeral
 * models), source freshness checks and singular test files.
 */
import { readFileSync } from 'node:fs';
import { EngineError } from '../../errors.js';
import type { CompiledModel, CompiledSeed, CompiledTest } from '../../compile/compile.js';
import type { StoredFailures } from '../data-tests.js';
import type { NodeName } from '../naming.js';
import { nameOf } from './dbt-naming.js';
import { treeConfig } from './config-tree.js';
import { DbtRelation } from './dbt-context.js';
import type { RenderState } from './dbt-render-types.js';
import { auditRelationName, builtinTestSql, countSql, TEST_CONFIG_KEYS, testConfig, testedRelation, testNodeName } from './dbt-tests.js';
import { freshnessSql } from './freshness.js';
import { packValue, type DbtLiveRecipe } from './live-render.js';
import type { LiveRecipeOf } from './dbt-compiled-nodes.js';
import type { NodeDeps } from './dbt-node-deps.js';
import { dirsOf, lower, type SeedEntry } from './dbt-resources.js';
import type { DbtScope } from './dbt-scope.js';
import type { ModelEntry } from './model-entry.js';
import type { TestDecl } from './properties.js';
import { cteRelation } from './relation.js';

type TestCfg = ReturnType<typeof testConfig>;

export class TestNodes {
  readonly tests: CompiledTest[] = [];
  readonly #names = new Set<string>();
  /** Test name → the node it tests (models and seeds): what dbt build waits on before that node's children. */
  readonly attached = new Map<string, string>();

  constructor(private readonly scope: DbtScope, private readonly deps: NodeDeps, private readonly liveRecipeOf: LiveRecipeOf) {}

  add(name0: string, file: string, sql: string, cfg: TestCfg, deps: string[], on: NodeName, label: string, attachedTo?: string, live?: (name: string) => DbtLiveRecipe): void {
    let name = name0;
    for (let i = 2; this.#names.has(lower(name)); i++) name = `${name0}_${i}`;
    this.#names.add(lower(name));
    if (attachedTo !== undefined) this.attached.set(name, attachedTo);
    this.tests.push({
      kind: 'test',
      name,
      source: { kind: 'test', name, file, rel: file, naming: on, tags: cfg.tags },
      dependencies: [...new Set(deps)].sort(),
      test: { kind: 'sql', sql: countSql(sql, cfg.failCalc, cfg.limit), label, severity: cfg.severity, warnIf: cfg.warnIf, errorIf: cfg.errorIf, ...this.#stored(name, cfg) },
      ...(live ? { live: live(name) } : {}),
    });
  }

  /** dbt's store_failures: the failing rows kept in `<schema>_dbt_test__audit.<test name>` (the test's `schema`/`alias` config name it otherwise). */
  #stored(name: string, cfg: TestCfg): { store?: StoredFailures } {
    if (cfg.storeAs === undefined) return {};
    const n = nameOf(this.scope, name, { ...cfg.raw, schema: cfg.raw.schema ?? 'dbt_test__audit' }, 'test');
    return { store: { relation: { ...(n.database ? { database: n.database } : {}), schema: n.schema, name: auditRelationName(n.name) }, as: cfg.storeAs, failCalc: cfg.failCalc } };
  }

  /** Test arguments are Jinja as in dbt: `to: ref('x')`, `values: "{{ var('list') }}"` (a whole `{{ … }}` keeps its value's type). */
  #argument(decl: TestDecl, onName: string, state: RenderState, v: unknown): unknown {
    if (typeof v !== 'string') return v;
    const e = this.scope.env(this.scope.finalRef);
    const whole = /^\s*\{\{([\s\S]*)\}\}\s*$/.exec(v)?.[1] ?? (/^\s*(ref|source)\s*\(/.test(v) ? v : undefined);
    if (whole === undefined) return v.includes('{{') ? this.scope.render(`arg:${v}`, decl.file, v, e, state, { name: onName, isIncremental: false }) : v;
    let value: unknown;
    this.scope.render(`argv:${whole}`, decl.file, `{{ __native(${whole}) }}`, e, state, { name: onName, isIncremental: false }, { __native: (x: unknown) => ((value = x), '') });
    return value; // a Relation stays one: test macros call its methods (dbt_utils.equality)
  }

  generic(decl0: TestDecl, onName: string, relation: DbtRelation | string, on: NodeName, baseDeps: Iterable<string>, self: string, attachedTo?: string): void {
    const { scope } = this;
    const { pf, macros, logger } = scope;
    const cfg = testConfig(decl0, treeConfig(pf.tests, pf.name, [], new Set()), (msg) => logger.log('warn', `${decl0.file}: test '${decl0.test}' on '${onName}': ${msg}`));
    if (!cfg.enabled) return;
    const state: RenderState = { deps: new Set(baseDeps), config: {} };
    const nodeName = testNodeName(decl0, onName); // named from the arguments as written, as dbt does
    const decl = { ...decl0, args: Object.fromEntries(Object.entries(decl0.args).map(([k, v]) => [k, k === 'config' ? v : this.#argument(decl0, onName, state, v)])) };
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
      const e = scope.env(scope.finalRef);
      const r = scope.gate.render(decl.file, (extra) => scope.render(`test:${decl.file}:${onName}:${decl.column ?? ''}:${decl.test}`, decl.file, body, e, state, { name: onName, isIncremental: false, modelConfig: cfg.raw }, { ...invoke, ...extra }));
      sql = r.out;
      if (r.deferred) live = (name) => this.liveRecipeOf(name, decl.file, body, this.deps.cteDefs({ deps: state.deps }), { extra: packValue(invoke) as Record<string, unknown>, countWith: ownConfig().failCalc, ...(cfg.limit !== undefined ? { countLimit: cfg.limit } : {}), modelConfig: cfg.raw });
    }
    // A test that reads an ephemeral model (the tested one, or through ref) gets its SQL as CTEs, as in dbt.
    this.add(nodeName, decl.file, this.deps.withCtes({ deps: state.deps }, sql), ownConfig(), this.deps.nodeDeps(state.deps, self), on, nodeName, attachedTo, live);
  }

  /** Source freshness: one check per source table with warn_after/error_after (`build test --freshness`). */
  freshness(): void {
    const { scope } = this;
    for (const src of scope.props.sources) {
      const q = freshnessSql(src, scope.sourceRelation(src).toString(), scope.now);
      if (q === undefined) continue;
      const sp = scope.partsOf(src);
      const name = `source_freshness_${src.source}_${src.name}`;
      this.#names.add(lower(name));
      this.tests.push({
        kind: 'test',
        name,
        source: { kind: 'test', name, file: src.file, rel: src.file, naming: { schema: sp.schema, name: sp.identifier, prodName: `${sp.schema}.${sp.identifier}`, fullName: `${sp.schema}.${sp.identifier}` }, tags: [] },
        dependencies: this.deps.nodeDeps([`source:${lower(src.source)}.${lower(src.name)}`], ''),
        test: { kind: 'sql', sql: q, label: name, severity: 'error', warnIf: '>=1', errorIf: '>=2' },
        freshness: true,
      });
    }
  }

  /** Singular tests: each SQL file of the test paths that is not a generic test definition. */
  singular(): void {
    const { scope } = this;
    const { pf } = scope;
    for (const f of scope.files.tests) {
      const body = readFileSync(f.abs, 'utf8');
      if (/\{%-?\s*test\s/.test(body)) continue; // generic test definitions, loaded as macros
      const state: RenderState = { deps: new Set(), config: {} };
      const r = scope.gate.render(f.file, (extra) => scope.render(`singular:${f.file}`, f.file, body, scope.env(scope.finalRef), state, { name: f.stem, isIncremental: false }, extra));
      const sql = r.out;
      const cfg = testConfig({ test: f.stem, args: { config: state.config }, file: f.file }, treeConfig(pf.tests, pf.name, [...dirsOf(f.rel), f.stem], new Set()), (msg) => scope.logger.log('warn', `${f.file}: ${msg}`));
      if (!cfg.enabled) continue;
      // A singular test reads whatever it refs: its lines name its file.
      const on: NodeName = { schema: scope.targetSchema, name: f.stem, prodName: f.file, fullName: f.file };
      const live = r.deferred ? (name: string) => this.liveRecipeOf(name, f.file, body, this.deps.cteDefs({ deps: state.deps }), { countWith: cfg.failCalc, ...(cfg.limit !== undefined ? { countLimit: cfg.limit } : {}) }) : undefined;
      this.add(f.stem, f.file, this.deps.withCtes({ deps: state.deps }, sql.replace(/;\s*$/, '')), cfg, this.deps.nodeDeps(state.deps, ''), on, f.stem, undefined, live);
    }
  }
}

/** Every test node of the project, in dbt's order: generic tests, freshness checks, singular tests. */
export function compileTests(scope: DbtScope, deps: NodeDeps, liveRecipeOf: LiveRecipeOf, nodes: { enabled: readonly ModelEntry[]; seeds: readonly SeedEntry[]; models: readonly CompiledModel[]; compiledSeeds: readonly CompiledSeed[] }): TestNodes {
  const t = new TestNodes(scope, deps, liveRecipeOf);
  const { byName } = scope.resources;
  // An ephemeral model has no relation: its tests run on its inlined CTE and wait for what it reads.
  for (const m of nodes.enabled) {
    if (!deps.isEphemeral(lower(m.name))) continue;
    for (const decl of m.props?.tests ?? []) t.generic(decl, m.name, cteRelation(m.name), m.naming!, [lower(m.name)], '');
  }
  for (const m of nodes.models) {
    const entry = byName.get(lower(m.name))!;
    if (entry.snapshot && entry.props === undefined) continue;
    for (const decl of entry.props?.tests ?? []) t.generic(decl, m.name, entry.relation!, m.source.naming, [lower(m.name)], '', lower(m.name));
  }
  for (const s of nodes.compiledSeeds) {
    const entry = nodes.seeds.find((x) => x.name === s.name)!;
    for (const decl of entry.props?.tests ?? []) t.generic(decl, s.name, new DbtRelation(s.source.naming.database, s.source.naming.schema, s.source.naming.name), s.source.naming, [lower(s.name)], '', lower(s.name));
  }
  for (const src of scope.props.sources) {
    const rel = scope.sourceRelation(src);
    const sp = scope.partsOf(src);
    const on: NodeName = { schema: sp.schema, name: sp.identifier, prodName: `${sp.schema}.${sp.identifier}`, fullName: `${sp.schema}.${sp.identifier}` };
    for (const decl of src.tests) t.generic(decl, `source_${src.source}_${src.name}`, rel, on, [`source:${lower(src.source)}.${lower(src.name)}`], '');
  }
  t.freshness();
  t.singular();
  return t;
}
