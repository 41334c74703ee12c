/**
 * One model through the templating pipeline: config blocks,
 * macros, `@name`, Jinja render, trim, FROM/JOIN rewriting, statement split,
 * dependency detection. The same function serves compile (default
 * incremental context) and run time (re-render with `is_incremental()` true
 * and a chunk's condition), so both see identical SQL.
 */
import { EngineError } from '../errors.js';
import { lookupVar } from '../home-env.js';
import type { Logger } from '../log.js';
import type { ModelSource } from '../project/load.js';
import { applyConfigCall, type ModelConfig } from '../project/model-config.js';
import { nameParts } from '../project/naming.js';
import { replaceAtNames } from '../sql/at-names.js';
import { findTableRefs, renderName, rewriteTableRefs, type TableRef } from '../sql/rewrite-refs.js';
import { codeTokens, tokenize } from '../sql/lexer.js';
import { splitModelSql } from '../sql/split-statements.js';
import { suggestions } from '../suggest.js';
import { callArgs } from '../template/call-args.js';
import { rewriteConfigBlocks } from '../template/config-block.js';
import type { TemplateEngine } from '../template/template-engine.js';
import type { IndexedNode, NodeLookup } from './node-index.js';
import { dirOf, type MacroScopes } from './macros.js';

export interface IncrementalContext {
  readonly isIncremental: boolean;
  /** SQL condition for incremental_where_cond(). */
  readonly whereCond: string;
  /** SQL literal for incremental_value(), or null. */
  readonly value: string | null;
}

export const DEFAULT_INCREMENTAL: IncrementalContext = { isIncremental: false, whereCond: '1=1', value: null };

export interface RenderEnv {
  readonly engine: TemplateEngine;
  readonly index: NodeLookup;
  readonly macros: MacroScopes;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: { readonly name: string; readonly type: string; readonly schema: string };
  readonly logger: Logger;
  readonly stepEnv?: Readonly<Record<string, string>>;
  /** `env_var()` lookups; default: the step env, the process env, then the home env file. The compile cache records them. */
  readonly envVar?: (name: string) => string | undefined;
}

export interface RenderedModel {
  readonly sql: string;
  readonly pre: readonly string[];
  readonly post: readonly string[];
  /** Lower-cased names of the nodes this model depends on. */
  readonly deps: ReadonlySet<string>;
  /** The effective config after any config() call. */
  readonly config: ModelConfig;
}

/** Template text before Jinja (front-matter, config() and `@name` handled): cached per model by the caller. */
export function prepareTemplate(env: RenderEnv, model: ModelSource): PreparedTemplate {
  const self = model.name.toLowerCase();
  const atRefs: IndexedNode[] = [];
  const body = rewriteConfigBlocks(model.body);
  const withAt = replaceAtNames(body, (ref) => {
    const n = env.index.resolve(ref);
    if (!n || n.name.toLowerCase() === self) return undefined;
    atRefs.push(n);
    return renderName(nameParts(n.naming), false);
  });
  return { source: withAt.sql, prefix: env.macros.prefixFor(dirOf(model.rel)), atRefs };
}

/** What a render needs of a model; JSON-safe so a worker thread can re-render it. */
export type RenderableModel = Pick<ModelSource, 'name' | 'config' | 'hasFrontMatter' | 'naming'>;

export interface PreparedTemplate {
  readonly source: string;
  /** The macro files in scope: compiled once per scope by the engine, not into every model. */
  readonly prefix: string;
  readonly atRefs: readonly IndexedNode[];
}

export function renderModel(env: RenderEnv, model: RenderableModel, prepared: PreparedTemplate, incr: IncrementalContext): RenderedModel {
  const deps = new Set<string>(prepared.atRefs.map((n) => n.name.toLowerCase()));
  let config = model.config;
  const self = model.name.toLowerCase();
  const candidates = () => env.index.all.map((n) => ({ name: n.name, file: n.file }));
  const ctx: Record<string, unknown> = {
    ...env.vars,
    ref: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      if (positional.length === 0 || positional[0] === undefined || positional[0] === null || positional[0] === '') throw new EngineError('compile', 'ref() requires a model name argument');
      const text = positional.length >= 2 ? positional.map(String).join('.') : String(positional[0]);
      const n = env.index.resolve(text);
      if (!n) throw new EngineError('compile', `ref('${text}') not found.${suggestions(text, candidates())}`);
      if (n.name.toLowerCase() !== self) deps.add(n.name.toLowerCase());
      return renderName(nameParts(n.naming), false);
    },
    src: source,
    source,
    this: renderName(nameParts(model.naming), false),
    is_incremental: () => incr.isIncremental,
    incremental_where_cond: () => incr.whereCond,
    // The lower bound as a SQL literal, or the SQL text `null` (never an empty string).
    incremental_value: () => incr.value ?? 'null',
    config: (...args: unknown[]) => {
      if (!model.hasFrontMatter) config = applyConfigCall(model.name, config, callArgs(args).kwargs, env.logger);
      return '';
    },
    var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      if (positional.length === 0) throw new EngineError('compile', 'var() requires a variable name argument');
      const name = String(positional[0]);
      if (Object.prototype.hasOwnProperty.call(env.vars, name)) return env.vars[name];
      if (positional.length >= 2) return positional[1];
      throw new EngineError('compile', `var('${name}') is not defined and no default was given`);
    },
    env_var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      if (positional.length === 0) throw new EngineError('compile', 'env_var() requires a variable name argument');
      const name = String(positional[0]);
      const v = env.envVar ? env.envVar(name) : lookupVar(name, env.stepEnv);
      if (v !== undefined) return v;
      if (positional.length >= 2) return positional[1];
      throw new EngineError('compile', `env_var('${name}') is not set and no default was given`);
    },
    target: env.target,
  };
  const rendered = env.engine.render(model.name, prepared.source, ctx, model.name, prepared.prefix).trim();
  // One scan of the rendered SQL serves the rewrite and the dependencies; a rewrite that changed the text is scanned again.
  const found = findTableRefs(rendered);
  const rewritten = config.rewrite ? rewriteRefs(env, rendered, self, deps, found) : rendered;
  const refs = rewritten === rendered ? found : findTableRefs(rewritten);
  for (const ref of refs) {
    const n = env.index.fullNameMatch(ref.parts.join('.'));
    if (n && n.name.toLowerCase() !== self) deps.add(n.name.toLowerCase());
  }
  let split;
  try {
    split = splitModelSql(rewritten);
    // The no-`;` fast path takes the text as the query unclassified; an empty or comment-only body is still no
    // statement. A query that is the whole text and holds a table reference has code: no second scan.
    const hasCode = (split.query === rewritten && refs.length > 0) || codeTokens(tokenize(split.query)).length > 0;
    if (!hasCode) throw new EngineError('compile', 'no SQL statements found');
  } catch (err) {
    throw EngineError.wrap(`model '${model.name}': could not parse multi-statement models`, err, 'compile');
  }
  return { sql: split.query, pre: split.pre, post: split.post, deps, config };
}

function source(...args: unknown[]): string {
  const { positional } = callArgs(args);
  if (positional.length === 0 || positional[0] === undefined || positional[0] === '') throw new EngineError('compile', 'src()/source() requires a table name argument');
  return positional.map(String).join('.');
}

/** References written with a node's name or prod name become its current full name. */
function rewriteRefs(env: RenderEnv, sql: string, self: string, deps: Set<string>, refs: readonly TableRef[]): string {
  return rewriteTableRefs(sql, (ref) => {
    const n = env.index.resolve(ref.parts.join('.'));
    if (!n || n.name.toLowerCase() === self) return undefined;
    deps.add(n.name.toLowerCase());
    const current = nameParts(n.naming);
    // Already the current name (what ref()/@name rendered, quoted): keep it as
    // written, or `public."Orders"` would come back as `"public"."Orders"`.
    if (current.length === ref.parts.length && current.every((p, i) => p === ref.parts[i])) return undefined;
    return current;
  }, refs).sql;
}
