/**
 * Data test queries and labels and their outcome messages
 * Pure: the same SQL runs on both targets, and each query yields the
 * violation count as the first column of its first row (the `expr` test
 * yields 0/1 per row and only the first row is read; no rows = pass), which
 * is exactly what `TargetSession.countQuery` returns.
 */
import { quoteString } from './literal.js';
import { quoteIdent, quoteRelation } from './relation.js';
import type { Relation } from './target.js';

export type DataTest =
  | { readonly kind: 'not_null'; readonly columns: readonly string[] }
  | { readonly kind: 'unique'; readonly columns: readonly string[] }
  | { readonly kind: 'accepted_values'; readonly column: string; readonly values: readonly (string | number | boolean)[] }
  | { readonly kind: 'expr'; readonly expr: string }
  | { readonly kind: 'relationships'; readonly column: string; /** as written */ readonly to: string; readonly field: string }
  /** A query that already yields the failure count (dbt tests). */
  | { readonly kind: 'sql'; readonly sql: string; readonly label: string };

export interface DataTestQuery {
  readonly sql: string;
  readonly label: string;
}

/**
 * `target` is the model's relation `T`; `parent` is `P`, the current full
 * name `to` resolved to (required for `relationships`).
 */
export function dataTestSql(test: DataTest, target: Relation, parent?: Relation): DataTestQuery {
  const T = quoteRelation(target);
  switch (test.kind) {
    case 'sql':
      return { sql: test.sql, label: test.label };
    case 'not_null':
      return {
        sql: `SELECT count(*) FROM ${T} WHERE ${test.columns.map((c) => `${quoteIdent(c)} IS NULL`).join(' OR ')}`,
        label: `not_null(${test.columns.join(', ')})`,
      };
    case 'unique': {
      const cols = test.columns.map(quoteIdent).join(', ');
      return {
        sql: `SELECT count(*) FROM (SELECT ${cols} FROM ${T} GROUP BY ${cols} HAVING count(*) > 1) _service_uniq`,
        label: `unique(${test.columns.join(', ')})`,
      };
    }
    case 'accepted_values': {
      const c = quoteIdent(test.column);
      // An empty list accepts nothing: every non-NULL value violates (and `IN ()` is not valid SQL).
      const notIn = test.values.length > 0 ? ` AND ${c} NOT IN (${test.values.map((v) => quoteString(String(v))).join(', ')})` : '';
      return { sql: `SELECT count(*) FROM ${T} WHERE ${c} IS NOT NULL${notIn}`, label: `accepted_values(${test.column})` };
    }
    case 'expr':
      return { sql: `SELECT CASE WHEN (${test.expr}) THEN 0 ELSE 1 END FROM ${T}`, label: `expr(${test.expr})` };
    case 'relationships': {
      if (parent === undefined) throw new Error(`relationships test on ${test.column} needs the resolved parent relation`);
      const c = quoteIdent(test.column);
      return {
        sql: `SELECT count(*) FROM ${T} AS child WHERE child.${c} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${quoteRelation(parent)} AS parent WHERE parent.${quoteIdent(test.field)} = child.${c})`,
        label: `relationships(${test.column} -> ${test.to}.${test.field})`,
      };
    }
  }
}

export type Severity = 'error' | 'warn';

/** Message for a test with violations. */
export function dataTestFailedMessage(modelName: string, label: string, violations: number, severity: Severity): string {
  const base = `model '${modelName}' test "${label}" failed: ${violations} violating row(s)`;
  return severity === 'warn' ? `${base} (severity: warn)` : base;
}

/** Prefix for a test whose query failed (`: <cause>` follows in the chain). */
export function dataTestExecPrefix(modelName: string, label: string): string {
  return `model '${modelName}' test "${label}" failed to execute`;
}
