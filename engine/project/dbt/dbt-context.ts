/**
 * The Jinja context a dbt model, test or macro renders with: `ref`,
 * `source`, `config`, `this`, `is_incremental`, `var`, `env_var`, `target`,
 * `adapter`, `log`, `return`, `exceptions`, `modules`, `graph`, `execute`.
 * What needs a live database at compile time (`run_query`,
 * `adapter.get_relation`) fails naming the file and the feature: the
 * compile stage has no connection, and a wrong guess would change the SQL.
 */
import { EngineError } from '../../errors.js';
import { lookupVar } from '../../home-env.js';
import type { Logger } from '../../log.js';
import { callArgs } from '../../template/call-args.js';
import { macroReturn } from '../../template/jinja-runtime.js';
import { pyModules, runStartedAt } from './py-modules.js';
import type { QueryTable } from './sync-query.js';

/** A relation as templates see it: prints as its quoted name, exposes its parts. */
export class DbtRelation {
  constructor(
    readonly database: string | undefined,
    readonly schema: string,
    readonly identifier: string,
  ) {}
  get name(): string {
    return this.identifier;
  }
  get table(): string {
    return this.identifier;
  }
  render(): string {
    return this.toString();
  }
  toString(): string {
    const q = (s: string) => (/^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replaceAll('"', '""')}"`);
    return [this.database, this.schema, this.identifier].filter((p): p is string => p !== undefined && p !== '').map(q).join('.');
  }
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

/**
 * What run_query / load_result hand back, shaped like dbt's agate table:
 * iterable rows (each indexable by position and by column name),
 * `.rows`, `.columns[i].values()`, `.column_names`.
 */
export function agateTable(t: QueryTable): unknown[] {
  const rows = t.rows.map((r) => Object.assign([...r], Object.fromEntries(t.columns.map((c, i) => [c, r[i]]))));
  return Object.assign([...rows], {
    rows,
    column_names: [...t.columns],
    columns: t.columns.map((name, i) => new AgateColumn(name, rows.map((r) => r[i]))),
  });
}

/** A class, not a mapping: `.values()` must be the column's values, not a dict's. */
class AgateColumn {
  constructor(
    readonly name: string,
    private readonly data: readonly unknown[],
  ) {}
  values(): unknown[] {
    return [...this.data];
  }
}

const sqlString = (v: unknown) => `'${String(v).replaceAll("'", "''")}'`;

/** One render's mutable results: dependencies found, config() calls, the nunjucks context (for macro lookups). */
export interface RenderState {
  readonly deps: Set<string>;
  config: Record<string, unknown>;
  nj?: { lookup(name: string): unknown };
}

export interface RenderSubject {
  readonly name: string;
  readonly file: string;
  readonly this?: DbtRelation;
  readonly isIncremental: boolean;
  readonly modelConfig?: Readonly<Record<string, unknown>>;
}

const fail = (file: string, msg: string) => new EngineError('compile', `${file}: ${msg}`);

export function dbtContext(env: DbtEnv, subject: RenderSubject, state: RenderState): Record<string, unknown> {
  const { file } = subject;
  const configFn = Object.assign(
    (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const first = positional[0];
      state.config = { ...state.config, ...(first && typeof first === 'object' ? (first as Record<string, unknown>) : {}), ...kwargs };
      return '';
    },
    {
      get: (k: string, d?: unknown) => (k in state.config ? state.config[k] : (subject.modelConfig?.[k] ?? d ?? null)),
      require: (k: string) => {
        const v = k in state.config ? state.config[k] : subject.modelConfig?.[k];
        if (v === undefined) throw fail(file, `config '${k}' is required`);
        return v;
      },
    },
  );
  const lookupMacro = (name: string): unknown => state.nj?.lookup(name);
  const adapterType = String(env.target.type);
  const adapter = {
    type: () => adapterType,
    dispatch: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const name = String(positional[0] ?? kwargs.macro_name ?? '');
      const ns = (positional[1] ?? kwargs.macro_namespace) as string | undefined;
      const names = [`${adapterType}__${name}`, `default__${name}`, ...(adapterType === 'duckdb' ? [`postgres__${name}`] : [])];
      for (const n of names) {
        const m = lookupMacro(n);
        if (typeof m === 'function') return m;
      }
      throw fail(file, `adapter.dispatch('${name}'${ns ? `, '${ns}'` : ''}): no macro ${names.join(' or ')} found`);
    },
    quote: (s: unknown) => `"${String(s).replaceAll('"', '""')}"`,
    get_relation: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const [database, schema, identifier] = [kwargs.database ?? positional[0], kwargs.schema ?? positional[1], kwargs.identifier ?? positional[2]];
      const t = env.query(`select table_name from information_schema.tables where table_schema = ${sqlString(schema)} and table_name = ${sqlString(identifier)}`);
      return t.rows.length === 0 ? null : new DbtRelation(adapterType === 'duckdb' && database ? String(database) : undefined, String(schema), String(identifier));
    },
    get_columns_in_relation: (relation: unknown) => {
      const r = relation as DbtRelation;
      const t = env.query(`select column_name, data_type from information_schema.columns where table_schema = ${sqlString(r.schema)} and table_name = ${sqlString(r.identifier)} order by ordinal_position`);
      return t.rows.map((row) => ({ name: row[0], column: row[0], data_type: row[1], dtype: row[1], quoted: `"${String(row[0])}"` }));
    },
    execute: (sql: unknown) => {
      const t = env.query(String(sql));
      return [{ code: 'OK', rows_affected: t.rows.length }, agateTable(t)];
    },
  };
  const results = new Map<string, unknown>();
  const ctx: Record<string, unknown> = {
    ...env.vars,
    __dbt_capture: function (this: { lookup(name: string): unknown }) {
      state.nj = this;
      return '';
    },
    ref: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      if (positional.length === 0) throw fail(file, 'ref() requires a model name');
      const [pkg, name] = positional.length >= 2 ? [String(positional[0]), String(positional[1])] : [undefined, String(positional[0])];
      const r = env.ref(name, pkg, file);
      state.deps.add(r.key);
      return r.value;
    },
    source: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      if (positional.length < 2) throw fail(file, 'source() requires a source name and a table name');
      const r = env.source(String(positional[0]), String(positional[1]), file);
      state.deps.add(r.key);
      return r.value;
    },
    config: configFn,
    this: subject.this,
    model: { name: subject.name, original_file_path: file, config: subject.modelConfig ?? {} },
    is_incremental: () => subject.isIncremental,
    should_full_refresh: () => env.fullRefresh && (state.config.full_refresh ?? subject.modelConfig?.full_refresh) !== false,
    var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      const name = String(positional[0] ?? '');
      if (Object.prototype.hasOwnProperty.call(env.vars, name)) return env.vars[name];
      if (positional.length >= 2) return positional[1];
      throw fail(file, `var('${name}') is not defined in dbt_project.yml or --vars and has no default`);
    },
    env_var: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      const name = String(positional[0] ?? '');
      const v = lookupVar(name, env.stepEnv);
      if (v !== undefined) return v;
      if (positional.length >= 2) return positional[1];
      throw fail(file, `env_var('${name}') is not set and has no default`);
    },
    target: env.target,
    adapter,
    run_query: (sql: unknown) => agateTable(env.query(String(sql))),
    // {% call statement('name', fetch_result=True) %} sql {% endcall %}, then load_result('name').
    statement: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const name = String(positional[0] ?? kwargs.name ?? 'main');
      const caller = kwargs.caller as (() => unknown) | undefined;
      const sql = caller ? String(caller()).trim() : '';
      const t = env.query(sql);
      results.set(name, { table: agateTable(t), data: t.rows, response: { code: 'OK', rows_affected: t.rows.length } });
      return '';
    },
    load_result: (name: unknown) => results.get(String(name)) ?? null,
    log: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      env.logger.log(positional[1] === true || kwargs.info === true ? 'info' : 'debug', String(positional[0] ?? ''));
      return '';
    },
    print: (msg: unknown) => {
      env.logger.log('info', String(msg));
      return '';
    },
    return: macroReturn,
    exceptions: {
      raise_compiler_error: (msg: unknown) => {
        throw fail(file, `compilation error: ${String(msg)}`);
      },
      warn: (msg: unknown) => {
        env.logger.log('warn', `${file}: ${String(msg)}`);
        return '';
      },
    },
    modules: pyModules(env.now),
    run_started_at: runStartedAt(env.now),
    invocation_id: env.invocationId,
    graph: env.graph,
    execute: true,
    flags: { FULL_REFRESH: env.fullRefresh, WHICH: 'run' },
    project_name: env.projectName,
    dbt_version: '1.8.0',
    tojson: (v: unknown) => JSON.stringify(v),
    fromjson: (s: unknown) => JSON.parse(String(s)),
    zip: (...xs: unknown[][]) => (xs[0] ?? []).map((_, i) => xs.map((x) => x[i])),
    set: (xs: unknown[]) => [...new Set(xs ?? [])],
    __dbt_invoke: (name: string, kwargs: Record<string, unknown>) => {
      const m = lookupMacro(name);
      if (typeof m !== 'function') throw fail(file, `test macro '${name}' not found`);
      return (m as (...a: unknown[]) => unknown)({ ...kwargs, __keywords: true });
    },
  };
  return ctx;
}

/** Prepended to every dbt template body: hands the nunjucks context to adapter.dispatch and test calls. */
export const CAPTURE = '{%- do __dbt_capture() -%}';
