/**
 * DuckDB dialect: ANSI quoting, inferred seed column types, and `MAX()` probes read
 * back through `strftime` (timestamptz converted to UTC first) so the text
 * has the same shape as on PostgreSQL.
 */
import type { Dialect } from '../dialect.js';
import { quoteIdent, quoteRelation } from '../relation.js';
import type { SeedColumnType, ValueCategory } from '../target.js';

const SEED_TYPES: Readonly<Record<SeedColumnType, string>> = {
  integer: 'BIGINT',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  text: 'VARCHAR',
  json: 'JSON',
};

const NUMBER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|REAL|DOUBLE|VARINT|BIGNUM|DECIMAL\(\d+,\s*\d+\)|NUMERIC(\(\d+,\s*\d+\))?)$/;

function valueCategory(dataType: string): ValueCategory {
  const t = dataType.toUpperCase();
  if (NUMBER.test(t)) return 'number';
  if (t === 'BOOLEAN') return 'boolean';
  if (t === 'DATE') return 'date';
  if (t === 'TIMESTAMP WITH TIME ZONE' || t === 'TIMESTAMPTZ') return 'timestamptz';
  if (/^(TIMESTAMP|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|DATETIME)$/.test(t)) return 'timestamp';
  return 'string';
}

function maxTextSql(c: string, category: ValueCategory): string {
  switch (category) {
    case 'date':
      return `strftime(MAX(${c}), '%Y-%m-%d')`;
    case 'timestamp':
      return `strftime(CAST(MAX(${c}) AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%f')`;
    case 'timestamptz':
      return `strftime(MAX(${c}) AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f')`;
    case 'number':
    case 'boolean':
    case 'string':
      return `CAST(MAX(${c}) AS VARCHAR)`;
  }
}

export const duckdbDialect: Dialect = {
  type: 'duckdb',
  quoteIdent,
  quoteRelation,
  seedColumnType: (t) => SEED_TYPES[t],
  valueCategory,
  maxTextSql,
};
