/**
 * The aggregate expressions a monitor reads back, per target, in one text
 * shape whatever the session's DateStyle or TimeZone: numbers as the database
 * prints them, dates `YYYY-MM-DD`, timestamps (timestamptz converted to UTC)
 * `YYYY-MM-DD HH:MM:SS.ffffff`, booleans `true`/`false`, anything else as
 * text. Reading text keeps PostgreSQL's BIGINT strings, DuckDB's BigInts and
 * both drivers' Date handling out of the picture.
 *
 * A registry keyed by target type, like `engine/targets/index.ts`: a new
 * target adds an entry here.
 */
import type { TargetType, ValueCategory } from '../targets/target.js';

export type Extreme = 'MIN' | 'MAX';

export interface AggregateSql {
  /** `MIN(c)` or `MAX(c)` as text in the fixed shape of its category. */
  extremeText(agg: Extreme, column: string, category: ValueCategory): string;
  /** Input of `COUNT(DISTINCT …)`: types without equality (json) are compared as text. */
  distinctInput(column: string, category: ValueCategory): string;
}

const postgres: AggregateSql = {
  extremeText(agg, c, category) {
    switch (category) {
      case 'number':
        return `CAST(${agg}(${c}) AS text)`;
      case 'boolean':
        return `CAST(${agg === 'MIN' ? 'bool_and' : 'bool_or'}(${c}) AS text)`; // PostgreSQL has no min/max(boolean)
      case 'date':
        return `to_char(${agg}(${c}), 'YYYY-MM-DD')`;
      case 'timestamp':
        return `to_char(${agg}(${c}), 'YYYY-MM-DD HH24:MI:SS.US')`;
      case 'timestamptz':
        return `to_char(${agg}(${c}) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;
      case 'string':
        return `${agg}(CAST(${c} AS text))`; // uuid, json, arrays… have no ordering of their own
    }
  },
  distinctInput: (c, category) => (category === 'string' ? `CAST(${c} AS text)` : c),
};

const duckdb: AggregateSql = {
  extremeText(agg, c, category) {
    switch (category) {
      case 'number':
      case 'boolean':
        return `CAST(${agg}(${c}) AS VARCHAR)`;
      case 'date':
        return `strftime(${agg}(${c}), '%Y-%m-%d')`;
      case 'timestamp':
        return `strftime(CAST(${agg}(${c}) AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%f')`;
      case 'timestamptz':
        return `strftime(${agg}(${c}) AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f')`;
      case 'string':
        return `${agg}(CAST(${c} AS VARCHAR))`;
    }
  },
  distinctInput: (c, category) => (category === 'string' ? `CAST(${c} AS VARCHAR)` : c),
};

const AGGREGATE_SQL: { readonly [K in TargetType]: AggregateSql } = { postgres, duckdb };

export function aggregateSql(type: TargetType): AggregateSql {
  return AGGREGATE_SQL[type];
}
