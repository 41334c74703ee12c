/**
 * dbt's "compile each node when it is ready": a model whose template asks
 * the database something at compile time (`run_query`, `statement`,
 * `adapter.get_columns_in_relation` — what `dbt_utils.star`,
 * `get_column_values` and `equality` do) is rendered at load with
 * `execute` false, as dbt parses it, and rendered again with `execute` true
 * on the thread that runs it, after its parents are built, so the
 * questions see real relations.
 *
 * Templates render synchronously and the run's session answers
 * asynchronously, so the render runs to the first question it has no answer
 * for, the question goes to the session, and the render starts again with
 * the answers so far — until it completes (each model asks a handful of
 * questions; a render is far cheaper than a round trip).
 */
import { EngineError, errorChain } from '../../errors.js';
import { importNear } from '../../lazy-import.js';
import type { Logger } from '../../log.js';
import type { TemplateEngine } from '../../template/template-engine.js';
import { CAPTURE, DbtRelation, dbtContext } from './dbt-context.js';
import type { DbtEnv, MacroSet, RenderState } from './dbt-render-types.js';
import { cteRelation } from './relation.js';
import { countSql } from './dbt-tests.js';
import { withScopes } from './macro-scopes.js';
import type { QueryTable } from './compile-time-query/query-session.js';

/** A relation as plain data (it crosses to a worker thread). */
export interface RelationParts {
  readonly database?: string;
  readonly schema: string;
  readonly identifier: string;
}

/** Everything a deferred model needs to render on the thread that runs it; JSON-safe. */
export interface DbtLiveRecipe {
  readonly name: string;
  readonly file: string;
  readonly body: string;
  /** The project's and its packages' macros (Maps and Sets survive the structured clone). */
  readonly macros: MacroSet;
  /** lower(name) → relation, or the CTE name of an ephemeral model. */
  readonly refs: Readonly<Record<string, RelationParts | string>>;
  /** lower(`source.table`) → relation. */
  readonly sources: Readonly<Record<string, RelationParts>>;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: Readonly<Record<string, unknown>>;
  readonly stepEnv?: Readonly<Record<string, string>>;
  readonly graph: Readonly<Record<string, unknown>>;
  readonly projectName: string;
  readonly fullRefresh: boolean;
  readonly invocationId: string;
  /** The run's start (run_started_at), ISO. */
  readonly now: string;
  readonly this?: RelationParts;
  readonly modelConfig: Readonly<Record<string, unknown>>;
  /** Ephemeral parents' CTE definitions (`__dbt__cte__x as (…)`, comma-joined), put in front of the SQL. */
  readonly ctes: string;
  /** Also render the is_incremental() form (an incremental model). */
  readonly incremental: boolean;
  /** More names for the template (a generic test: the test macro and its arguments). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** A test: its failing rows counted with this fail_calc… */
  readonly countWith?: string;
  /** …at most this many of them (dbt's test `limit`). */
  readonly countLimit?: number;
}

/** A session's rows as templates see them: BigInt as number, dates as ISO text (as at load, query-session.ts). */
export function queryTable(r: { readonly columns: readonly string[]; readonly rows: readonly (readonly unknown[])[]; readonly numericText?: readonly number[] }): QueryTable {
  const plain = (v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.toISOString() : v !== null && typeof v === 'object' && !Array.isArray(v) ? String(v) : v);
  // dbt's agate tables hold numbers for integer and decimal columns (`3 == 3`): exact ones become numbers, the rest stay text.
  const numeric = new Set(r.numericText ?? []);
  const exact = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    const n = Number(v);
    return Number.isFinite(n) && (Number.isSafeInteger(n) || !/^-?\d+$/.test(v)) ? n : v;
  };
  return { columns: r.columns, rows: r.rows.map((row) => row.map((v, i) => (numeric.has(i) ? exact(plain(v)) : plain(v)))) };
}

/** What every node of a project rendered at run time shares. */
export type SharedRecipe = Omit<DbtLiveRecipe, 'name' | 'file' | 'body' | 'ctes' | 'this' | 'modelConfig' | 'incremental' | 'extra' | 'countWith' | 'countLimit'>;

export const relationParts = (r: DbtRelation): RelationParts => ({ ...(r.database !== undefined ? { database: r.database } : {}), schema: r.schema, identifier: r.identifier });

/** Recipes of one project's nodes: the shared part is built on the first deferred node (most projects have none). */
export function liveRecipes(shared: () => SharedRecipe): (name: string, file: string, body: string, ctes: string, own: Partial<DbtLiveRecipe>) => DbtLiveRecipe {
  let common: SharedRecipe | undefined;
  return (name, file, body, ctes, own) => {
    common ??= shared();
    return { ...common, name, file, body, ctes, modelConfig: {}, incremental: false, ...own };
  };
}

export interface LiveSql {
  readonly sql: string;
  readonly incrementalSql?: string;
}

/** Renders stop at the first question without an answer: this is what stops them. */
class NeedsAnswer extends Error {
  constructor(readonly sql: string) {
    super('compile-time query without an answer yet');
  }
}

const MAX_QUESTIONS = 200;
const relationOf = (p: RelationParts) => new DbtRelation(p.database, p.schema, p.identifier);

/** Relations inside a recipe's values, as plain data (a class instance loses its methods crossing threads). */
export function packValue(v: unknown): unknown {
  if (v instanceof DbtRelation && v.type === 'cte') return { __dbt_cte: v.identifier.slice('__dbt__cte__'.length) };
  if (v instanceof DbtRelation) return { __dbt_relation: { ...(v.database !== undefined ? { database: v.database } : {}), schema: v.schema, identifier: v.identifier } };
  if (Array.isArray(v)) return v.map(packValue);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, packValue(x)]));
  return v;
}

function unpackValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unpackValue);
  if (v !== null && typeof v === 'object') {
    const rel = (v as { __dbt_relation?: RelationParts }).__dbt_relation;
    if (rel !== undefined) return relationOf(rel);
    const cte = (v as { __dbt_cte?: string }).__dbt_cte;
    if (cte !== undefined) return cteRelation(cte);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unpackValue(x)]));
  }
  return v;
}

let engine: TemplateEngine | undefined;
/**
 * This thread's engine for renders at run time: compiled templates (the
 * project's macro files above all) are cached across the thread's nodes,
 * keyed by their text, so a thread compiles a project's macros once.
 */
export async function liveEngine(): Promise<TemplateEngine> {
  engine ??= (await importNear<typeof import('../../template/nunjucks-engine.js')>(import.meta.url, '../../template/nunjucks-engine.js')).createNunjucksEngine();
  return engine;
}

/** `with <ctes>` in front of `sql`, merged into the model's own `with` when it has one (as dbt injects them). */
export function injectCtes(defs: string, sql: string): string {
  if (defs === '') return sql;
  const lead = /^(\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*)with\s/i.exec(sql);
  return lead ? `${lead[1]}with ${defs},\n${sql.slice(lead[0].length)}` : `with ${defs}\n${sql}`;
}

function liveEnv(r: DbtLiveRecipe, logger: Logger, query: (sql: string) => QueryTable): DbtEnv {
  return {
    file: (n) => n,
    ref: (name, _pkg, from) => {
      const v = r.refs[name.toLowerCase()];
      if (v === undefined) throw new EngineError('compile', `${from}: ref('${name}') not found`);
      return { key: name.toLowerCase(), value: typeof v === 'string' ? cteRelation(v.slice('__dbt__cte__'.length)) : relationOf(v) };
    },
    source: (src, table, from) => {
      const v = r.sources[`${src}.${table}`.toLowerCase()];
      if (v === undefined) throw new EngineError('compile', `${from}: source('${src}', '${table}') is not declared in any sources: block`);
      return { key: `source:${src}.${table}`.toLowerCase(), value: relationOf(v) };
    },
    vars: r.vars,
    target: r.target,
    logger,
    ...(r.stepEnv ? { stepEnv: r.stepEnv } : {}),
    now: new Date(r.now),
    graph: r.graph,
    projectName: r.projectName,
    fullRefresh: r.fullRefresh,
    invocationId: r.invocationId,
    query,
  };
}

function renderOnce(engine: TemplateEngine, r: DbtLiveRecipe, env: DbtEnv, isIncremental: boolean): string {
  const state: RenderState = { deps: new Set(), config: {} };
  const subject = { name: r.name, file: r.file, ...(r.this ? { this: relationOf(r.this) } : {}), isIncremental, modelConfig: r.modelConfig };
  const ctx = dbtContext(env, subject, state);
  Object.assign(ctx, withScopes(engine, r.macros, state, ctx), r.extra ? (unpackValue(r.extra) as Record<string, unknown>) : {});
  const sql = injectCtes(r.ctes, engine.render(`live:${r.file}:${r.name}`, CAPTURE + r.body, ctx, r.file, r.macros.prefix).trim().replace(/;\s*$/, ''));
  return r.countWith !== undefined ? countSql(sql, r.countWith, r.countLimit) : sql;
}

/**
 * The model's SQL rendered with `execute` true, its compile-time questions
 * answered by `ask` (the session of the thread that runs it).
 */
export async function renderLive(engine: TemplateEngine, r: DbtLiveRecipe, ask: (sql: string) => Promise<QueryTable>, logger: Logger): Promise<LiveSql> {
  const answers = new Map<string, QueryTable>();
  let pending: string | undefined;
  const env = liveEnv(r, logger, (sql) => {
    const a = answers.get(sql);
    if (a !== undefined) return a;
    pending = sql;
    throw new NeedsAnswer(sql);
  });
  const attempt = async (isIncremental: boolean): Promise<string> => {
    for (;;) {
      pending = undefined;
      try {
        return renderOnce(engine, r, env, isIncremental);
      } catch (err) {
        // The template engine wraps what a context function throws: the pending question tells them apart.
        if (pending === undefined) throw err;
      }
      if (answers.size >= MAX_QUESTIONS) throw new EngineError('compile', `${r.file}: more than ${MAX_QUESTIONS} compile-time queries`);
      const sql = pending;
      logger.log('debug', `compile-time query (${r.name}): ${sql}`);
      try {
        answers.set(sql, await ask(sql));
      } catch (err) {
        throw new EngineError('compile', `${r.file}: compile-time query failed: ${errorChain(err)}`);
      }
    }
  };
  const sql = await attempt(false);
  return r.incremental ? { sql, incrementalSql: await attempt(true) } : { sql };
}
