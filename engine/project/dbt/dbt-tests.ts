/**
 * dbt data tests as queries that return the failing rows: the four
 * built-in generic tests (`unique`, `not_null`, `accepted_values`,
 * `relationships`), custom generic tests (`{% test %}` blocks, called as
 * the macro `test_<name>`), with the test config dbt reads (`severity`,
 * `where`, `warn_if`, `error_if`, `fail_calc`). Each becomes one node.
 */
import { createHash } from 'node:crypto';
import { EngineError } from '../../errors.js';
import type { TestDecl } from './properties.js';

export interface TestConfig {
  readonly severity: 'error' | 'warn';
  readonly where?: string;
  readonly warnIf: string;
  readonly errorIf: string;
  readonly failCalc: string;
  readonly enabled: boolean;
  readonly tags: readonly string[];
  /** dbt's `limit`: at most this many failing rows are counted (and stored). */
  readonly limit?: number;
  /** dbt's `store_failures` / `store_failures_as`: keep the failing rows in a table or view (`ephemeral`: not kept). */
  readonly storeAs?: 'table' | 'view';
  /** The merged config as written (what `config.get()` / `should_store_failures()` read in the test's template). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** Keys of a test entry that are its config, whether under `config:` or beside the arguments. */
export const TEST_CONFIG_KEYS: ReadonlySet<string> = new Set(['severity', 'where', 'warn_if', 'error_if', 'fail_calc', 'enabled', 'tags', 'meta', 'alias', 'limit', 'store_failures', 'store_failures_as', 'database', 'schema']);
const IGNORED_OK = new Set(['meta', 'alias', 'database', 'schema']);

/** Test config from the project tree, the entry's `config:` and its legacy top-level keys (severity, where…). */
export function testConfig(decl: TestDecl, tree: Readonly<Record<string, unknown>>, warn: (msg: string) => void): TestConfig {
  const inline = (decl.args.config ?? {}) as Record<string, unknown>;
  const legacy = Object.fromEntries(Object.entries(decl.args).filter(([k]) => TEST_CONFIG_KEYS.has(k)));
  const c = { ...tree, ...legacy, ...inline };
  for (const k of Object.keys(c)) {
    if (!TEST_CONFIG_KEYS.has(k)) warn(`test config '${k}' is not supported and has no effect`);
    else if (IGNORED_OK.has(k)) continue;
  }
  const storeAs = c.store_failures_as === undefined || c.store_failures_as === null ? undefined : String(c.store_failures_as).toLowerCase();
  if (storeAs !== undefined && storeAs !== 'table' && storeAs !== 'view' && storeAs !== 'ephemeral') {
    throw new EngineError('load', `${decl.file}: test '${decl.test}': store_failures_as must be table, view or ephemeral, got '${String(c.store_failures_as)}'`);
  }
  const limit = c.limit === undefined || c.limit === null ? undefined : Number(c.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new EngineError('load', `${decl.file}: test '${decl.test}': limit must be a whole number, got '${String(c.limit)}'`);
  const sev = String(c.severity ?? 'error').toLowerCase();
  if (sev !== 'error' && sev !== 'warn') throw new EngineError('load', `${decl.file}: test '${decl.test}': severity must be error or warn, got '${String(c.severity)}'`);
  for (const k of ['warn_if', 'error_if']) {
    if (c[k] !== undefined && !parseCondition(String(c[k]))) throw new EngineError('load', `${decl.file}: test '${decl.test}': ${k} '${String(c[k])}' is not a comparison like '>10' or '!=0'`);
  }
  return {
    severity: sev,
    ...(c.where !== undefined && c.where !== null ? { where: String(c.where) } : {}),
    warnIf: String(c.warn_if ?? '!=0'),
    errorIf: String(c.error_if ?? '!=0'),
    failCalc: String(c.fail_calc ?? 'count(*)'),
    enabled: c.enabled !== false,
    tags: Array.isArray(c.tags) ? c.tags.map(String) : c.tags ? [String(c.tags)] : [],
    ...(limit !== undefined ? { limit } : {}),
    // dbt: store_failures_as wins over store_failures; `ephemeral` stores nothing.
    ...(storeAs === 'table' || storeAs === 'view' ? { storeAs } : storeAs === undefined && c.store_failures === true ? { storeAs: 'table' as const } : {}),
    raw: c,
  };
}

const CONDITION = /^\s*(==|=|!=|<>|>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$/;

function parseCondition(text: string): { op: string; n: number } | undefined {
  const m = CONDITION.exec(text);
  return m ? { op: m[1]!, n: Number(m[2]) } : undefined;
}

/** dbt's `warn_if`/`error_if` on the failure count. */
export function conditionHolds(text: string, count: number): boolean {
  const c = parseCondition(text);
  if (!c) return count !== 0;
  switch (c.op) {
    case '==':
    case '=':
      return count === c.n;
    case '!=':
    case '<>':
      return count !== c.n;
    case '>=':
      return count >= c.n;
    case '<=':
      return count <= c.n;
    case '>':
      return count > c.n;
    default:
      return count < c.n;
  }
}

const q = (c: string) => (/^[a-z_][a-z0-9_]*$/.test(c) ? c : `"${c.replaceAll('"', '""')}"`);
const lit = (v: unknown, quote: boolean) => (quote ? `'${String(v).replaceAll("'", "''")}'` : String(v));

/** The failing-rows query of a built-in generic test, or undefined for any other test name. */
export function builtinTestSql(test: string, model: string, column: string | undefined, args: Readonly<Record<string, unknown>>, parent?: string): string | undefined {
  const need = () => {
    if (column === undefined) throw new Error(`'${test}' needs a column (declare it under a column, or pass column_name)`);
    return q(column);
  };
  switch (test) {
    case 'not_null':
      return `select ${need()} from ${model} where ${need()} is null`;
    case 'unique':
      return `select ${need()} as unique_field, count(*) as n_records from ${model} where ${need()} is not null group by ${need()} having count(*) > 1`;
    case 'accepted_values': {
      const values = args.values;
      if (!Array.isArray(values)) throw new Error(`'accepted_values' needs values: [...]`);
      const quote = args.quote !== false;
      return `with all_values as (select ${need()} as value_field, count(*) as n_records from ${model} group by ${need()}) select * from all_values where value_field not in (${values.map((v) => lit(v, quote)).join(', ')})`;
    }
    case 'relationships': {
      if (parent === undefined || typeof args.field !== 'string') throw new Error(`'relationships' needs to: and field:`);
      const c = need();
      return `select child.${c} as from_field from ${model} as child left join ${parent} as parent on child.${c} = parent.${q(args.field)} where child.${c} is not null and parent.${q(args.field)} is null`;
    }
    default:
      return undefined;
  }
}

const slug = (v: unknown) => String(v).replace(/[^A-Za-z0-9_]+/g, '_');

/** dbt's test node names: `not_null_orders_id`, `accepted_values_orders_status__placed__shipped`. */
export function testNodeName(decl: TestDecl, on: string): string {
  const base = decl.test.split('.').pop()!;
  const column = decl.column ?? (typeof decl.args.column_name === 'string' ? decl.args.column_name : undefined);
  const parts = [base, on, ...(column ? [column] : [])].map(slug).join('_');
  const extra: string[] = [];
  // Arguments by name, as dbt names its test nodes (`relationships_orders_customer_id__customer_id__ref_customers_`).
  for (const [k, v] of Object.entries(decl.args).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (k === 'config' || k === 'column_name' || TEST_CONFIG_KEYS.has(k) || k === 'quote') continue;
    if (Array.isArray(v)) extra.push(...v.map(slug));
    else if (typeof v !== 'object') extra.push(slug(v));
  }
  const name = extra.length > 0 ? `${parts}__${extra.join('__')}` : parts;
  return name.slice(0, 120);
}

/** The failing rows as dbt's test materialization selects them: `limit` applied. */
export function failingRowsSql(failingRows: string, limit?: number): string {
  return limit === undefined ? failingRows : `${failingRows}\nlimit ${limit}`;
}

/** The count query the runner executes: the `fail_calc` over the failing rows. */
export function countSql(failingRows: string, failCalc: string, limit?: number): string {
  return `select ${failCalc} from (\n${failingRowsSql(failingRows, limit)}\n) dbt_internal_test`;
}

/** The failing rows of a count query made by `countSql` with this `failCalc` (a stored test keeps them). */
export function failingRowsOf(count: string, failCalc: string): string {
  const head = `select ${failCalc} from (\n`;
  const tail = '\n) dbt_internal_test';
  if (!count.startsWith(head) || !count.endsWith(tail)) throw new Error('not a count query of this test');
  return count.slice(head.length, -tail.length);
}

/**
 * The relation name dbt gives a test's stored failures: the test's name, or
 * for a name of 64 characters or more its first 30 and an md5 of the whole
 * (dbt's rule for long test names; PostgreSQL cuts identifiers at 63).
 */
export function auditRelationName(testName: string): string {
  return testName.length < 64 ? testName : `${testName.slice(0, 30)}_${createHash('md5').update(testName).digest('hex')}`;
}

/** The relation a test runs on, with its `where` config applied as dbt does. */
export function testedRelation(relation: string, where: string | undefined): string {
  return where === undefined ? relation : `(select * from ${relation} where ${where}) dbt_subquery`;
}
