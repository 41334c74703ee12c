/**
 * Declarative data test entries: validated at load time so
 * a bad entry fails the project before anything runs. `compile` shows the
 * entries as written; the runner turns a validated `DataTest` into SQL.
 */
import { EngineError } from '../errors.js';

export type DataTest =
  | { readonly kind: 'not_null'; readonly columns: readonly string[]; readonly severity: Severity }
  | { readonly kind: 'unique'; readonly columns: readonly string[]; readonly severity: Severity }
  | { readonly kind: 'accepted_values'; readonly column: string; readonly values: readonly string[]; readonly severity: Severity }
  | { readonly kind: 'expr'; readonly expr: string; readonly severity: Severity }
  | { readonly kind: 'relationships'; readonly column: string; readonly to: string; readonly field: string; readonly severity: Severity }
  /**
   * A dbt test: `sql` yields the failure count; `warnIf`/`errorIf` are dbt's conditions on it (`!=0`, `>10`);
   * `store`: its failing rows are kept in that relation (dbt's `store_failures`).
   */
  | { readonly kind: 'sql'; readonly sql: string; readonly label: string; readonly severity: Severity; readonly warnIf: string; readonly errorIf: string; readonly store?: StoredFailures };

/** Where a dbt test keeps its failing rows: a table (or view) replaced by each run, then counted with `failCalc`. */
export interface StoredFailures {
  readonly relation: { readonly database?: string; readonly schema: string; readonly name: string };
  readonly as: 'table' | 'view';
  readonly failCalc: string;
}

export type Severity = 'error' | 'warn';

const KINDS = ['not_null', 'unique', 'accepted_values', 'expr', 'relationships'] as const;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'mapping' : typeof v;
}

function columns(v: unknown): string[] {
  if (typeof v === 'string') return v.trim() === '' ? [] : [v];
  if (Array.isArray(v)) return v.filter((c) => c !== null && c !== undefined && String(c) !== '').map(String);
  return [];
}

const asMapping = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The keys a test's own mapping may hold beside its arguments: a severity, directly or under `config:`. */
const SEVERITY_KEYS = ['severity', 'config'];

/**
 * The severity written at `where` (an entry or a test's own mapping):
 * `severity: warn` or `config: {severity: warn}`; undefined when absent.
 * Any other key under `config:` is refused, never ignored.
 */
function severityAt(where: Record<string, unknown>, path: string, fail: (m: string) => EngineError): Severity | undefined {
  const found: { key: string; value: unknown }[] = [];
  if ('severity' in where) found.push({ key: `${path}severity`, value: where.severity });
  if ('config' in where) {
    const config = asMapping(where.config);
    if (!config) throw fail(`${path}config must be a mapping, got ${typeName(where.config)}`);
    const other = Object.keys(config).filter((k) => k !== 'severity');
    if (other.length > 0) throw fail(`unknown key ${path}config.${other[0]}; a test's config holds only severity`);
    if ('severity' in config) found.push({ key: `${path}config.severity`, value: config.severity });
  }
  for (const f of found) if (f.value !== 'error' && f.value !== 'warn') throw fail(`severity must be one of: error, warn; got '${String(f.value)}'${f.key === 'severity' ? '' : ` (${f.key})`}`);
  if (found.length === 2 && found[0]!.value !== found[1]!.value) throw fail(`${found[0]!.key} and ${found[1]!.key} disagree`);
  return found[0]?.value as Severity | undefined;
}

/** Refuses keys of a test's own mapping that its kind does not take. */
function onlyKeys(m: Record<string, unknown>, kind: string, allowed: readonly string[], fail: (m: string) => EngineError): void {
  const other = Object.keys(m).find((k) => !allowed.includes(k) && !SEVERITY_KEYS.includes(k));
  if (other !== undefined) throw fail(`unknown key ${kind}.${other}; expected ${[...allowed, ...SEVERITY_KEYS].join(', ')}`);
}

/** The columns of `not_null`/`unique`: a name, a list, or a mapping with `column` or `columns` (then it may carry a severity). */
function columnsOf(kind: string, v: unknown, fail: (m: string) => EngineError): { cols: string[]; own?: Record<string, unknown> } {
  const m = asMapping(v);
  if (!m) return { cols: columns(v) };
  onlyKeys(m, kind, ['column', 'columns'], fail);
  return { cols: [...columns(m.column), ...columns(m.columns)], own: m };
}

/**
 * Validates one `tests:` entry; `i` is 1-based. The severity may sit beside
 * the test (`- unique: id` / `severity: warn`), in the test's own mapping
 * (`- unique: {column: id, severity: warn}`), or under `config:` in either
 * place; every other key is an error naming it.
 */
export function parseDataTest(model: string, i: number, entry: unknown): DataTest {
  const fail = (msg: string) => new EngineError('load', `model '${model}' test ${i}: ${msg}`);
  const e = asMapping(entry);
  if (!e) throw fail(`test entry must be a mapping, got ${typeName(entry)}`);
  const outer = severityAt(e, '', fail);
  const kinds = KINDS.filter((k) => k in e);
  if (kinds.length === 0) {
    const keys = Object.keys(e).filter((k) => !SEVERITY_KEYS.includes(k));
    throw fail(`unknown test type in [${keys.join(', ')}]; expected not_null, unique, accepted_values, expr, or relationships`);
  }
  if (kinds.length > 1) throw fail(`one test per entry, got ${kinds.join(' and ')}; write each as its own list item`);
  const kind = kinds[0]!;
  const extra = Object.keys(e).find((k) => k !== kind && !SEVERITY_KEYS.includes(k));
  if (extra !== undefined) throw fail(`unknown key ${extra} beside ${kind}; expected severity or config`);
  const v = e[kind];
  const severityOf = (own: Record<string, unknown> | undefined): Severity => {
    const inner = own ? severityAt(own, `${kind}.`, fail) : undefined;
    if (inner !== undefined && outer !== undefined && inner !== outer) throw fail(`${kind}'s own severity '${inner}' and the entry's severity '${outer}' disagree`);
    return inner ?? outer ?? 'error';
  };
  switch (kind) {
    case 'not_null':
    case 'unique': {
      const { cols, own } = columnsOf(kind, v, fail);
      if (cols.length === 0) throw fail(`${kind} requires one or more columns`);
      return { kind, columns: cols, severity: severityOf(own) };
    }
    case 'accepted_values': {
      const m = asMapping(v);
      if (!m) throw fail('accepted_values must be a mapping with column and values');
      if (typeof m.column !== 'string' || m.column === '' || !Array.isArray(m.values)) throw fail('accepted_values requires column and values');
      onlyKeys(m, kind, ['column', 'values'], fail);
      return { kind, column: m.column, values: m.values.map(String), severity: severityOf(m) };
    }
    case 'expr': {
      if (typeof v !== 'string' || v.trim() === '') throw fail('expr test requires a non-empty expression');
      return { kind, expr: v, severity: severityOf(undefined) };
    }
    case 'relationships': {
      const m = asMapping(v) ?? {};
      const ok = (x: unknown) => typeof x === 'string' && x !== '';
      if (!ok(m.column) || !ok(m.to) || !ok(m.field)) throw fail('relationships requires column, to and field');
      onlyKeys(m, kind, ['column', 'to', 'field'], fail);
      return { kind, column: m.column as string, to: m.to as string, field: m.field as string, severity: severityOf(m) };
    }
  }
}

/** The label used in messages: `not_null(a, b)`, `relationships(c -> to.f)`. */
export function dataTestLabel(t: DataTest): string {
  switch (t.kind) {
    case 'not_null':
    case 'unique':
      return `${t.kind}(${t.columns.join(', ')})`;
    case 'accepted_values':
      return `accepted_values(${t.column})`;
    case 'expr':
      return `expr(${t.expr})`;
    case 'relationships':
      return `relationships(${t.column} -> ${t.to}.${t.field})`;
    case 'sql':
      return t.label;
  }
}
