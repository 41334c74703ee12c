/**
 * The shapes a dbt render passes between its parts — the environment
 * (dbt-context.ts), the adapter (dbt-adapter.ts), macro namespaces
 * (macro-scopes.ts) and dispatch (dispatch.ts) — in one module that imports
 * none of them, so those parts do not import each other in a circle.
 */
import type { Logger } from '../../log.js';
import type { QueryTable } from './compile-time-query/query-session.js';
import type { DbtRelation } from './relation.js';

/** The namespace of our built-in dbt macros. */
export const BUILTIN_NS = 'dbt';

/** The project's `dispatch:` config: namespace → search order. */
export type DispatchConfig = ReadonlyMap<string, readonly string[]>;

export interface MacroSet {
  /** The project's macro files: defined in every template's own context. */
  readonly prefix: string;
  readonly projectName: string;
  /** Macro names defined by the project (not packages). */
  readonly projectMacros: ReadonlySet<string>;
  /** Package name (and `dbt`, the built-ins) → its macro names: `{{ dbt_utils.star(...) }}` calls the package's macro. */
  readonly namespaces: ReadonlyMap<string, readonly string[]>;
  /** Each namespace's macro text, rendered as its own scope (macro-scopes.ts). */
  readonly scopeText: ReadonlyMap<string, string>;
  /** Each namespace's folder, for messages. */
  readonly scopeLabel: ReadonlyMap<string, string>;
  /** The project's `dispatch:` config: namespace → search order. */
  readonly dispatch: DispatchConfig;
}

type MacroFn = (...args: unknown[]) => unknown;

/** A render's macro namespaces as dispatch and the context look macros up (macro-scopes.ts — MacroScopes). */
export interface MacroLookup {
  readonly macros: MacroSet;
  /** The macro `name` defined by namespace `ns`; undefined when it defines none. */
  find(ns: string, name: string): MacroFn | undefined;
  /** Any definition of `name`: the project's, then the packages', then dbt's. */
  findAnywhere(name: string): MacroFn | undefined;
}

/** What ref()/source() hand back: a relation, or (an ephemeral model) the name of its inlined CTE. */
export type Resolved = { readonly key: string; readonly value: DbtRelation | string };

export interface DbtEnv {
  readonly file: (name: string) => string;
  ref(name: string, pkg: string | undefined, from: string): Resolved;
  source(sourceName: string, table: string, from: string): Resolved;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly target: Readonly<Record<string, unknown>>;
  readonly logger: Logger;
  readonly stepEnv?: Readonly<Record<string, string>>;
  readonly now: Date;
  readonly graph: Readonly<Record<string, unknown>>;
  readonly projectName: string;
  readonly fullRefresh: boolean;
  readonly invocationId: string;
  /** Runs SQL on the target now (compile time). */
  readonly query: (sql: string) => QueryTable;
}

/** One render's mutable results: dependencies found, config() calls, the nunjucks context (for macro lookups). */
export interface RenderState {
  readonly deps: Set<string>;
  config: Record<string, unknown>;
  nj?: { lookup(name: string): unknown };
  /** The render's macro namespaces (packages, `dbt`); set by the loader's render. */
  scopes?: MacroLookup;
}
