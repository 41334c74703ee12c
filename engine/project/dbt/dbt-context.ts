/**
 * The Jinja context a dbt model, test or macro renders with: `ref`,
 * `source`, `config`, `this`, `is_incremental`, `var`, `env_var`, `target`,
 * `adapter`, `log`, `return`, `exceptions`, `modules`, `graph`, `execute`.
 * What needs a live database at compile time (`run_query`,
 * `adapter.get_relation`) fails naming the file and the feature: the
 * compile stage has no connection, and a wrong guess would change the SQL.
 */
import { EngineError } from '../../errors.js';
import { dbtEnvVar } from './dbt-env.js';
import { callArgs } from '../../template/call-args.js';
import { pyCompare } from '../../template/py-compare.js';
import { macroReturn } from '../../template/jinja-runtime.js';
import { pyModules, runStartedAt } from './py-modules.js';
import { agateTable } from './agate.js';
import { dbtAdapter } from './dbt-adapter.js';
import type { DbtEnv, RenderState } from './dbt-render-types.js';
import { DbtRelation } from './relation.js';

export { DbtRelation } from './relation.js';
export { agateTable } from './agate.js';

export interface RenderSubject {
  readonly name: string;
  readonly file: string;
  readonly this?: DbtRelation;
  readonly isIncremental: boolean;
  readonly modelConfig?: Readonly<Record<string, unknown>>;
  /** 'model' unless said otherwise ('test', 'seed', 'snapshot'). */
  readonly resourceType?: string;
}

const fail = (file: string, msg: string) => new EngineError('compile', `${file}: ${msg}`);

function pySet(xs: unknown): unknown[] {
  const items = [...new Set(Array.isArray(xs) ? xs : xs === null || xs === undefined ? [] : typeof xs === 'string' ? [...xs] : Object.keys(xs as object))];
  try {
    return items.sort(pyCompare);
  } catch {
    return items; // values Python cannot order either: insertion order
  }
}

/** dbt's Python helpers in the context. */
const PY_GLOBALS: Readonly<Record<string, unknown>> = {
  tojson: (v: unknown) => JSON.stringify(v),
  fromjson: (s: unknown) => JSON.parse(String(s)),
  zip: (...xs: unknown[][]) => (xs[0] ?? []).map((_, i) => xs.map((x) => x[i])),
  // Python's set: unique values; kept sorted so two sets of the same values compare equal with `==`.
  set: (xs: unknown) => pySet(xs),
};

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
  const { adapter, api, loadRelation } = dbtAdapter(env, state, file);
  const testConfigOf = (k: string) => (k in state.config ? state.config[k] : subject.modelConfig?.[k]);
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
    model: { name: subject.name, original_file_path: file, config: subject.modelConfig ?? {}, package_name: env.projectName, resource_type: subject.resourceType ?? 'model', unique_id: `${subject.resourceType ?? 'model'}.${env.projectName}.${subject.name}` },
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
      const v = dbtEnvVar(name, env.stepEnv);
      if (v !== undefined) return v;
      if (positional.length >= 2) return positional[1];
      throw fail(file, `env_var('${name}') is not set and has no default`);
    },
    target: env.target,
    adapter,
    api,
    load_relation: loadRelation,
    // dbt: the test's store_failures config, else the --store-failures flag (which we do not have).
    should_store_failures: () => testConfigOf('store_failures') === true,
    // As dbt: while `execute` is false (a parse), statements and run_query do not reach the database.
    run_query: (sql: unknown) => (ctx.execute === false ? null : agateTable(env.query(String(sql)), env.logger)),
    // {% call statement('name', fetch_result=True) %} sql {% endcall %}, then load_result('name').
    statement: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const name = String(positional[0] ?? kwargs.name ?? 'main');
      const caller = kwargs.caller as (() => unknown) | undefined;
      const sql = caller ? String(caller()).trim() : '';
      if (ctx.execute === false) return '';
      const t = env.query(sql);
      results.set(name, { table: agateTable(t, env.logger), data: t.rows, response: { code: 'OK', rows_affected: t.rows.length } });
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
    ...PY_GLOBALS,
    __dbt_invoke: (name: string, kwargs: Record<string, unknown>, pkg?: string) => {
      const m = pkg !== undefined ? state.scopes?.find(pkg, name) : (state.scopes?.findAnywhere(name) ?? lookupMacro(name));
      if (typeof m !== 'function') throw fail(file, `test macro '${name}' not found`);
      return (m as (...a: unknown[]) => unknown)({ ...kwargs, __keywords: true });
    },
  };
  return ctx;
}

/** Prepended to every dbt template body: hands the nunjucks context to adapter.dispatch and test calls. */
export const CAPTURE = '{%- do __dbt_capture() -%}';
