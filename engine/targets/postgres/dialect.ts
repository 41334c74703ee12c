/**
 * PostgreSQL dialect: ANSI quoting, inferred seed column types, and `MAX()` probes
 * read back through `to_char` so the text does not depend on the session's
 * DateStyle or TimeZone (timestamptz is converted to UTC first).
 */
import type { Dialect } from '../dialect.js';
import { quoteIdent, quoteRelation } from '../relation.js';
import type { SeedColumnType, ValueCategory } from '../target.js';

const SEED_TYPES: Readonly<Record<SeedColumnType, string>> = {
  integer: 'bigint',
  float: 'double precision',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  text: 'text',
  json: 'jsonb',
};

const NUMBER_TYPES = new Set(['smallint', 'integer', 'bigint', 'numeric', 'decimal', 'real', 'double precision']);

function valueCategory(dataType: string): ValueCategory {
  const t = dataType.toLowerCase();
  if (NUMBER_TYPES.has(t)) return 'number';
  if (t === 'boolean') return 'boolean';
  if (t === 'date') return 'date';
  if (t === 'timestamp with time zone') return 'timestamptz';
  if (t === 'timestamp without time zone') return 'timestamp';
  return 'string';
}

function maxTextSql(c: string, category: ValueCategory): string {
  switch (category) {
    case 'boolean':
      return `bool_or(${c})::text`; // PostgreSQL has no max(boolean)
    case 'date':
      return `to_char(MAX(${c}), 'YYYY-MM-DD')`;
    case 'timestamp':
      return `to_char(MAX(${c}), 'YYYY-MM-DD HH24:MI:SS.US')`;
    case 'timestamptz':
      return `to_char(MAX(${c}) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;
    case 'number':
    case 'string':
      return `MAX(${c})::text`;
  }
}

export const postgresDialect: Dialect = {
  type: 'postgres',
  quoteIdent,
  quoteRelation,
  seedColumnType: (t) => SEED_TYPES[t],
  valueCategory,
  maxTextSql,
};
