/**
 * Column types between PostgreSQL and DuckDB (replication).
 *
 * Every source column is described in its own dialect (PostgreSQL
 * `format_type` text, DuckDB type names) and classified into a `ColumnKind`;
 * the target's DDL type comes from the kind, except between two databases of
 * the same dialect, where the source's own type text is kept (so
 * `varchar(20)` or `integer[]` survive PG→PG unchanged).
 *
 * The pairs are chosen to round-trip without loss: integers keep their width,
 * `numeric(p,s)` ↔ `DECIMAL(p,s)` (p ≤ 38), timestamps with and without time
 * zone keep microseconds, JSON stays JSON (`jsonb` on PostgreSQL), NULL stays
 * NULL. An unconstrained `numeric` has no DuckDB twin, so its precision and
 * scale are measured on the data (`decimalFromProbe`).
 */

export type Dialect = 'postgres' | 'duckdb';

export type ColumnKind =
  | 'smallint' | 'integer' | 'bigint' | 'hugeint' | 'decimal' | 'real' | 'double'
  | 'boolean' | 'text' | 'date' | 'time' | 'timetz' | 'timestamp' | 'timestamptz' | 'interval'
  | 'json' | 'uuid' | 'blob' | 'nested' | 'other';

export interface SourceColumn {
  readonly name: string;
  /** The type as the source names it (`numeric(18,4)`, `DECIMAL(18,4)`). */
  readonly sourceType: string;
  readonly kind: ColumnKind;
  /** decimal only; absent for an unconstrained PostgreSQL numeric until probed. */
  readonly precision?: number;
  readonly scale?: number;
  /** PostgreSQL: a pg_catalog type another database has too (false for enums, domains, composites). */
  readonly builtin: boolean;
  /** PostgreSQL: an array type. */
  readonly array?: boolean;
}

/** DuckDB's widest DECIMAL. */
export const MAX_DECIMAL_PRECISION = 38;

const PG_KINDS: ReadonlyArray<readonly [RegExp, ColumnKind]> = [
  [/^smallint$/, 'smallint'],
  [/^integer$/, 'integer'],
  [/^bigint$/, 'bigint'],
  [/^numeric/, 'decimal'],
  [/^real$/, 'real'],
  [/^double precision$/, 'double'],
  [/^boolean$/, 'boolean'],
  [/^(text|character varying.*|character.*|name|citext|"char")$/, 'text'],
  [/^date$/, 'date'],
  [/^time(\(\d+\))? without time zone$/, 'time'],
  [/^time(\(\d+\))? with time zone$/, 'timetz'],
  [/^timestamp(\(\d+\))? without time zone$/, 'timestamp'],
  [/^timestamp(\(\d+\))? with time zone$/, 'timestamptz'],
  [/^interval/, 'interval'],
  [/^jsonb?$/, 'json'],
  [/^uuid$/, 'uuid'],
  [/^bytea$/, 'blob'],
];

/** Classifies a PostgreSQL column from `format_type(oid, typmod)`. */
export function pgColumn(name: string, formatType: string, builtin: boolean): SourceColumn {
  const array = formatType.endsWith('[]');
  if (array) return { name, sourceType: formatType, kind: 'nested', builtin, array: true };
  if (!builtin) return { name, sourceType: formatType, kind: 'other', builtin };
  const kind = PG_KINDS.find(([re]) => re.test(formatType))?.[1] ?? 'other';
  if (kind !== 'decimal') return { name, sourceType: formatType, kind, builtin };
  const m = /^numeric\((\d+),(\d+)\)$/.exec(formatType);
  return m ? { name, sourceType: formatType, kind, precision: Number(m[1]), scale: Number(m[2]), builtin } : { name, sourceType: formatType, kind, builtin };
}

const DUCK_KINDS: Readonly<Record<string, ColumnKind>> = {
  TINYINT: 'smallint', SMALLINT: 'smallint', UTINYINT: 'smallint',
  INTEGER: 'integer', USMALLINT: 'integer',
  BIGINT: 'bigint', UINTEGER: 'bigint',
  HUGEINT: 'hugeint', UBIGINT: 'hugeint', UHUGEINT: 'hugeint', BIGNUM: 'hugeint', VARINT: 'hugeint',
  FLOAT: 'real', DOUBLE: 'double',
  BOOLEAN: 'boolean',
  VARCHAR: 'text',
  DATE: 'date',
  TIME: 'time', 'TIME WITH TIME ZONE': 'timetz',
  TIMESTAMP: 'timestamp', TIMESTAMP_S: 'timestamp', TIMESTAMP_MS: 'timestamp', TIMESTAMP_NS: 'timestamp',
  'TIMESTAMP WITH TIME ZONE': 'timestamptz',
  INTERVAL: 'interval',
  JSON: 'json',
  UUID: 'uuid',
  BLOB: 'blob',
};

function isNestedDuckType(t: string): boolean {
  return /\]$/.test(t) || /^(STRUCT|MAP|UNION)\(/.test(t);
}

/** Classifies a DuckDB column from its type name (`DESCRIBE`). */
export function duckColumn(name: string, duckType: string): SourceColumn {
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(duckType);
  if (decimal) return { name, sourceType: duckType, kind: 'decimal', precision: Number(decimal[1]), scale: Number(decimal[2]), builtin: true };
  if (isNestedDuckType(duckType)) return { name, sourceType: duckType, kind: 'nested', builtin: true };
  return { name, sourceType: duckType, kind: DUCK_KINDS[duckType] ?? 'other', builtin: true };
}

const PG_DDL: Readonly<Record<ColumnKind, string>> = {
  smallint: 'smallint', integer: 'integer', bigint: 'bigint', hugeint: 'numeric', decimal: 'numeric',
  real: 'real', double: 'double precision', boolean: 'boolean', text: 'text', date: 'date',
  time: 'time', timetz: 'time with time zone', timestamp: 'timestamp', timestamptz: 'timestamp with time zone',
  interval: 'interval', json: 'jsonb', uuid: 'uuid', blob: 'bytea', nested: 'jsonb', other: 'text',
};

const DUCK_DDL: Readonly<Record<ColumnKind, string>> = {
  smallint: 'SMALLINT', integer: 'INTEGER', bigint: 'BIGINT', hugeint: 'HUGEINT', decimal: 'DECIMAL(38,9)',
  real: 'FLOAT', double: 'DOUBLE', boolean: 'BOOLEAN', text: 'VARCHAR', date: 'DATE',
  time: 'TIME', timetz: 'TIMETZ', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ',
  interval: 'INTERVAL', json: 'JSON', uuid: 'UUID', blob: 'BLOB', nested: 'JSON', other: 'VARCHAR',
};

/** The target's column type for a source column. */
export function ddlType(source: Dialect, target: Dialect, col: SourceColumn): string {
  if (source === target && col.builtin) return col.sourceType;
  if (target === 'postgres') {
    if (col.kind === 'decimal' && col.precision !== undefined) return `numeric(${col.precision},${col.scale ?? 0})`;
    if (col.kind === 'hugeint' && /^(HUGEINT|UHUGEINT)$/.test(col.sourceType)) return 'numeric(39,0)';
    if (col.kind === 'hugeint' && col.sourceType === 'UBIGINT') return 'numeric(20,0)';
    return PG_DDL[col.kind];
  }
  if (col.kind === 'decimal') {
    if (col.precision === undefined) return DUCK_DDL.decimal;
    return col.precision <= MAX_DECIMAL_PRECISION ? `DECIMAL(${col.precision},${col.scale ?? 0})` : 'VARCHAR';
  }
  return DUCK_DDL[col.kind];
}

/**
 * An unconstrained PostgreSQL numeric column measured on the data: the
 * widest integer part and scale seen. DECIMAL(18, scale) when the values fit
 * 18 digits (DuckDB keeps it in a BIGINT: reading 1M such values from CSV
 * took 0.07 s, against 8.2 s for DECIMAL(38,12), a HUGEINT, with DuckDB
 * 1.5), else DECIMAL(38, scale), else the column stays text. A later value
 * too wide for the chosen type fails the load loudly.
 */
export function decimalFromProbe(col: SourceColumn, maxIntegerDigits: number | null, maxScale: number | null): SourceColumn {
  const scale = maxScale ?? 9;
  const digits = maxIntegerDigits ?? 1;
  if (digits + scale > MAX_DECIMAL_PRECISION) return { ...col, kind: 'text' };
  return { ...col, precision: digits + scale <= 18 ? 18 : MAX_DECIMAL_PRECISION, scale };
}

/** True when a PostgreSQL numeric column has no declared precision (needs a probe before DuckDB DDL). */
export function needsDecimalProbe(col: SourceColumn): boolean {
  return col.kind === 'decimal' && col.precision === undefined;
}
