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
  /** A dbt test: `sql` yields the failure count; `warnIf`/`errorIf` are dbt's conditions on it (`!=0`, `>10`). */
  | { readonly kind: 'sql'; readonly sql: string; readonly label: string; readonly severity: Severity; readonly warnIf: string; readonly errorIf: string };

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

/** Validates one `tests:` entry; `i` is 1-based. */
export function parseDataTest(model: string, i: number, entry: unknown): DataTest {
  const fail = (msg: string) => new EngineError('load', `model '${model}' test ${i}: ${msg}`);
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw fail(`test entry must be a mapping, got ${typeName(entry)}`);
  const e = entry as Record<string, unknown>;
  const sev = e.severity ?? 'error';
  if (sev !== 'error' && sev !== 'warn') throw fail(`severity must be one of: error, warn; got '${String(sev)}'`);
  const severity = sev as Severity;
  const kind = KINDS.find((k) => k in e);
  if (!kind) {
    const keys = Object.keys(e).filter((k) => k !== 'severity');
    throw fail(`unknown test type in [${keys.join(', ')}]; expected not_null, unique, accepted_values, expr, or relationships`);
  }
  const v = e[kind];
  switch (kind) {
    case 'not_null':
    case 'unique': {
      const cols = columns(v);
      if (cols.length === 0) throw fail(`${kind} requires one or more columns`);
      return { kind, columns: cols, severity };
    }
    case 'accepted_values': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('accepted_values must be a mapping with column and values');
      const m = v as Record<string, unknown>;
      if (typeof m.column !== 'string' || m.column === '' || !Array.isArray(m.values)) throw fail('accepted_values requires column and values');
      return { kind, column: m.column, values: m.values.map(String), severity };
    }
    case 'expr': {
      if (typeof v !== 'string' || v.trim() === '') throw fail('expr test requires a non-empty expression');
      return { kind, expr: v, severity };
    }
    case 'relationships': {
      const m = (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {}) as Record<string, unknown>;
      const ok = (x: unknown) => typeof x === 'string' && x !== '';
      if (!ok(m.column) || !ok(m.to) || !ok(m.field)) throw fail('relationships requires column, to and field');
      return { kind, column: m.column as string, to: m.to as string, field: m.field as string, severity };
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
