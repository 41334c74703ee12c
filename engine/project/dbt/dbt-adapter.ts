/**
 * `adapter.*`, `api.*` and `load_relation` in dbt templates: dispatch
 * (dispatch.ts), quoting, and the catalog questions packages ask at compile
 * time (`get_relation`, `get_columns_in_relation`), answered by a query on
 * the target's information_schema.
 */
import { EngineError } from '../../errors.js';
import { callArgs } from '../../template/call-args.js';
import { agateTable } from './agate.js';
import { columnApi, DbtColumn } from './column.js';
import type { DbtEnv, RenderState } from './dbt-render-types.js';
import { dispatchMacro } from './dispatch.js';
import { DbtRelation, relationApi, type RelationType } from './relation.js';

const sqlString = (v: unknown) => `'${String(v).replaceAll("'", "''")}'`;
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function dbtAdapter(env: DbtEnv, state: RenderState, file: string) {
  const adapterType = String(env.target.type);
  const duck = adapterType === 'duckdb';
  const fail = (msg: string) => new EngineError('compile', `${file}: ${msg}`);

  const getRelation = (...args: unknown[]): DbtRelation | null => {
    const { positional, kwargs } = callArgs(args);
    const [database, schema, identifier] = [kwargs.database ?? positional[0], kwargs.schema ?? positional[1], kwargs.identifier ?? positional[2]];
    const inDb = duck && database !== undefined && database !== null && database !== '' ? ` and lower(table_catalog) = lower(${sqlString(database)})` : '';
    const t = env.query(
      `select table_catalog, table_schema, table_name, table_type from information_schema.tables where lower(table_schema) = lower(${sqlString(schema)}) and lower(table_name) = lower(${sqlString(identifier)})${inDb}`,
    );
    const row = t.rows[0];
    if (row === undefined) return null;
    const type: RelationType = /view/i.test(String(row[3])) ? 'view' : 'table';
    return new DbtRelation(duck && database ? String(row[0]) : undefined, String(row[1]), String(row[2]), type);
  };

  const relationOf = (value: unknown, what: string): DbtRelation => {
    if (value instanceof DbtRelation) {
      if (value.is_cte) throw fail(`${what}: '${value.identifier}' is an ephemeral model (a CTE, not a relation in the database)`);
      return value;
    }
    throw fail(`${what} expects a relation (ref(), source(), api.Relation.create()), got '${String(value)}'`);
  };

  const getColumns = (relation: unknown): DbtColumn[] => {
    const r = relationOf(relation, 'adapter.get_columns_in_relation');
    const inDb = duck && r.database ? ` and lower(table_catalog) = lower(${sqlString(r.database)})` : '';
    const t = env.query(
      `select column_name, data_type, character_maximum_length, numeric_precision, numeric_scale from information_schema.columns where lower(table_schema) = lower(${sqlString(r.schema)}) and lower(table_name) = lower(${sqlString(r.identifier)})${inDb} order by ordinal_position`,
    );
    return t.rows.map((row) => (/^(numeric|decimal)$/i.test(String(row[1])) ? new DbtColumn(String(row[0]), String(row[1]), null, num(row[3]), num(row[4])) : new DbtColumn(String(row[0]), String(row[1]), num(row[2]))));
  };

  const loadRelation = (relation: unknown): DbtRelation | null => {
    const r = relationOf(relation, 'load_relation');
    return getRelation(r.database ?? null, r.schema, r.identifier);
  };

  const adapter = {
    type: () => adapterType,
    dispatch: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const name = String(positional[0] ?? kwargs.macro_name ?? '');
      const ns = (positional[1] ?? kwargs.macro_namespace) as string | undefined | null;
      if (state.scopes === undefined) throw fail(`adapter.dispatch('${name}') is not available here`);
      return dispatchMacro(state.scopes, adapterType, name, ns ?? undefined, file);
    },
    quote: (s: unknown) => `"${String(s).replaceAll('"', '""')}"`,
    get_relation: getRelation,
    load_relation: loadRelation,
    get_columns_in_relation: getColumns,
    /** dbt runs the drop while the template renders; so do we. */
    drop_relation: (relation: unknown) => {
      const r = relationOf(relation, 'adapter.drop_relation');
      env.query(`drop ${r.is_view ? 'view' : 'table'} if exists ${r.render()}${duck ? '' : ' cascade'}`);
      return '';
    },
    get_missing_columns: (from: unknown, to: unknown) => {
      const have = new Set(getColumns(to).map((c) => c.name.toLowerCase()));
      return getColumns(from).filter((c) => !have.has(c.name.toLowerCase()));
    },
    execute: (...args: unknown[]) => {
      const { positional, kwargs } = callArgs(args);
      const t = env.query(String(positional[0] ?? kwargs.sql ?? ''));
      return [{ code: 'OK', rows_affected: t.rows.length }, agateTable(t, env.logger)];
    },
  };
  const api = { Relation: relationApi(duck), Column: columnApi(adapterType) };
  return { adapter, api, loadRelation };
}
