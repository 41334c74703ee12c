/**
 * What every stage of a dbt compile (engine/project/dbt/load-dbt.ts) shares:
 * the project file, profile and vars, the macros, the resources found, and
 * the render environment — refs (placeholders while configs are learnt,
 * final names after), sources, the `graph` variable and compile-time queries.
 */
import { randomUUID } from 'node:crypto';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Connection } from '../../connections/index.js';
import type { CompiledProject } from '../../compile/compile.js';
import { suggestions } from '../../suggest.js';
import { createNunjucksEngine } from '../../template/nunjucks-engine.js';
import type { TemplateEngine } from '../../template/template-engine.js';
import type { NodeName } from '../naming.js';
import { withScopes } from './macro-scopes.js';
import { cteRelation } from './relation.js';
import { CAPTURE, DbtRelation, dbtContext } from './dbt-context.js';
import type { DbtEnv, MacroSet, RenderState, Resolved } from './dbt-render-types.js';
import { findDbtFiles, type DbtFiles } from './dbt-files.js';
import { loadMacros } from './dbt-macros.js';
import { loadDbtProjectFile, type DbtProjectFile } from './dbt-project-file.js';
import { resolveProfile, type ResolvedProfile } from './profiles.js';
import { SyncQuery } from './compile-time-query/sync-query.js';
import { emptyProperties, readProperties, type Properties, type SourceTableProps } from './properties.js';
import { renderedProjectFile } from './project-config-jinja.js';
import { ParseGate } from './parse-gate.js';
import { collectResources, lower, type DbtResources } from './dbt-resources.js';

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

/** Whom a render is for: `this`, `is_incremental()`, `model.config`. */
export interface RenderSubject {
  readonly name: string;
  readonly this?: DbtRelation;
  readonly isIncremental: boolean;
  readonly modelConfig?: Record<string, unknown>;
}

interface SourceParts {
  readonly schema: string;
  readonly identifier: string;
  readonly database?: string;
}

export class DbtScope {
  readonly root: string;
  readonly pf: DbtProjectFile;
  readonly profile: ResolvedProfile;
  readonly targetType: 'postgres' | 'duckdb';
  readonly targetSchema: string;
  readonly vars: Record<string, unknown>;
  readonly engine: TemplateEngine = createNunjucksEngine();
  readonly files: DbtFiles;
  readonly props: Properties;
  readonly macros: MacroSet;
  readonly resources: DbtResources;
  /** `source_name.table` (lower-cased) → its properties. */
  readonly sources: Map<string, SourceTableProps>;
  /** Lower-cased seed name → its relation's name, once named. */
  readonly seedNames = new Map<string, NodeName>();
  readonly gate: ParseGate;
  readonly now = new Date();
  readonly invocationId = randomUUID();
  /** Templates' `graph`: empty while configs are learnt, every node once they are named. */
  graph: Record<string, unknown> = { nodes: {}, sources: {} };
  #queries: SyncQuery | undefined;
  readonly #sourceParts = new Map<SourceTableProps, SourceParts>();

  constructor(readonly req: DbtBuildRequest, readonly logger: Logger) {
    this.root = req.root;
    const pf0 = loadDbtProjectFile(this.root, logger);
    this.profile = resolveProfile(this.root, pf0.profile, { profilesDir: req.profilesDir, target: req.target, stepEnv: req.stepEnv });
    this.targetType = this.profile.connection.type as 'postgres' | 'duckdb';
    this.targetSchema = String(this.profile.target.schema);
    // vars: global keys, then the ones scoped to this project's name, then --vars.
    const scoped = pf0.vars[pf0.name];
    this.vars = { ...pf0.vars, ...(scoped && typeof scoped === 'object' && !Array.isArray(scoped) ? (scoped as Record<string, unknown>) : {}), ...(req.vars ?? {}) };
    this.pf = renderedProjectFile(pf0, this.engine, { vars: this.vars, target: this.profile.target, stepEnv: req.stepEnv });
    this.files = findDbtFiles(this.root, this.pf, logger);
    if (this.pf.onRunStart.length + this.pf.onRunEnd.length > 0) logger.log('warn', 'dbt_project.yml: on-run-start/on-run-end hooks are not supported by service build and are not run');
    this.props = emptyProperties();
    for (const f of this.files.properties) readProperties(this.props, f.abs, f.file, logger);
    this.macros = loadMacros(this.root, this.files.macros, this.files.tests, logger, { projectName: this.pf.name, dispatch: this.pf.dispatch });
    for (const s of this.props.sources) {
      if (s.freshness && (s.freshness.warn_after || s.freshness.error_after)) {
        if (!s.loadedAtField) throw new EngineError('load', `${s.file}: source '${s.source}.${s.name}': freshness needs loaded_at_field`);
        logger.log('debug', `${s.file}: source '${s.source}.${s.name}': freshness is checked by \`service build test --freshness\``);
      }
    }
    this.resources = collectResources(this.pf, this.files, this.props, logger);
    this.sources = new Map(this.props.sources.map((s) => [`${lower(s.source)}.${lower(s.name)}`, s]));
    this.gate = new ParseGate(logger);
  }

  /** Ends the compile-time query thread, if a template asked the database. */
  close(): void {
    this.#queries?.close();
  }

  /** A source's schema, identifier and database; each may be Jinja (`{{ target.schema }}_raw`), rendered once. */
  partsOf(s: SourceTableProps): SourceParts {
    let p = this.#sourceParts.get(s);
    if (!p) {
      const field = (v: string) => (v.includes('{{') ? this.render(`src:${v}`, s.file, v, this.env(this.placeholderRef), { deps: new Set(), config: {} }, { name: s.name, isIncremental: false }) : v);
      p = { schema: field(s.schema), identifier: field(s.identifier), ...(s.database ? { database: field(s.database) } : {}) };
      this.#sourceParts.set(s, p);
    }
    return p;
  }

  sourceRelation(s: SourceTableProps): DbtRelation {
    const p = this.partsOf(s);
    return new DbtRelation(this.targetType === 'duckdb' ? p.database : undefined, p.schema, p.identifier);
  }

  #refMiss(name: string, from: string): never {
    const { models, seedEntries } = this.resources;
    const hint = suggestions(name, [...models.map((m) => ({ name: m.name, file: m.f.file })), ...seedEntries.map((s) => ({ name: s.name, file: s.f.file }))]);
    throw new EngineError('compile', `${from}: ref('${name}') not found.${hint}`);
  }

  /** ref() while configs are learnt: the name is checked, the relation is not known yet. */
  readonly placeholderRef = (name: string, _pkg: string | undefined, from: string): Resolved => {
    if (!this.resources.byName.has(lower(name)) && !this.resources.seedEntries.some((s) => lower(s.name) === lower(name))) this.#refMiss(name, from);
    return { key: lower(name), value: new DbtRelation(undefined, '__pending__', name) };
  };

  /** ref() with every name known. */
  readonly finalRef = (name: string, _pkg: string | undefined, from: string): Resolved => {
    const m = this.resources.byName.get(lower(name));
    if (m) {
      if (m.config.enabled === false) throw new EngineError('compile', `${from}: ref('${name}') points at a disabled model`);
      if (m.config.materialized === 'ephemeral') return { key: lower(name), value: cteRelation(m.name) };
      return { key: lower(name), value: m.relation! };
    }
    const s = this.seedNames.get(lower(name));
    if (s) return { key: lower(name), value: new DbtRelation(s.database, s.schema, s.name) };
    return this.#refMiss(name, from);
  };

  env(ref: DbtEnv['ref']): DbtEnv {
    return {
      file: (n) => n,
      ref,
      source: (src, table, from) => {
        const s = this.sources.get(`${lower(src)}.${lower(table)}`);
        if (!s) throw new EngineError('compile', `${from}: source('${src}', '${table}') is not declared in any sources: block`);
        return { key: `source:${lower(src)}.${lower(table)}`, value: this.sourceRelation(s) };
      },
      vars: this.vars,
      target: this.profile.target,
      logger: this.gate.templateLogger,
      stepEnv: this.req.stepEnv,
      now: this.now,
      graph: this.graph,
      projectName: this.pf.name,
      fullRefresh: this.req.fullRefresh === true,
      invocationId: this.invocationId,
      query: (sql) => {
        const parsed = this.gate.intercept();
        if (parsed) return parsed;
        this.#queries ??= new SyncQuery(this.profile.connection);
        this.logger.log('debug', `compile-time query: ${sql}`);
        return this.#queries.query(sql);
      },
    };
  }

  render(cacheKey: string, file: string, body: string, e: DbtEnv, state: RenderState, subject: RenderSubject, extra: Record<string, unknown> = {}): string {
    const ctx = dbtContext(e, { ...subject, file }, state);
    // `execute: false` (a parse) must be in the context the package scopes inherit.
    if ('execute' in extra) ctx.execute = extra.execute;
    Object.assign(ctx, withScopes(this.engine, this.macros, state, ctx), extra);
    return this.engine.render(cacheKey, CAPTURE + body, ctx, file, this.macros.prefix).trim();
  }
}
