/**
 * Conservative seed type inference. A column gets a
 * non-text type only when every non-NULL value matches that type's pattern
 * exactly, so loading never rewrites what the user wrote: `007` stays `007`,
 * `1e5` stays `1e5`. Guessing wrong in the other direction (a value silently
 * changed by a cast) is the failure this module exists to prevent.
 *
 * Each value is classified once into a `ValueKind`; a column's type follows
 * from the set of kinds seen (a bit mask), so inference is one pass over the
 * rows. The same classifier serves JSON seeds for date/timestamp strings.
 */

export type LogicalType = 'integer' | 'float' | 'boolean' | 'date' | 'timestamp' | 'timestamptz' | 'text' | 'json';

/** Column type per logical type on PostgreSQL (seed type inference). */
export const POSTGRES_TYPES: Readonly<Record<LogicalType, string>> = {
  integer: 'bigint',
  float: 'double precision',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  text: 'text',
  json: 'jsonb',
};

/** Column type per logical type on DuckDB (seed type inference). */
export const DUCKDB_TYPES: Readonly<Record<LogicalType, string>> = {
  integer: 'BIGINT',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  text: 'VARCHAR',
  json: 'JSON',
};

export interface SeedColumn {
  readonly name: string;
  readonly type: LogicalType;
}

/**
 * A seed ready to load: typed columns and rows of text renderings that both
 * PostgreSQL and DuckDB accept for the column type (NULL is `null`).
 */
export interface SeedTable {
  readonly columns: readonly SeedColumn[];
  readonly rows: readonly (readonly (string | null)[])[];
}

/** What one non-NULL text value could be; `text` means "nothing narrower". */
export type ValueKind = 'integer' | 'decimal' | 'boolean' | 'date' | 'timestamp' | 'timestamptz' | 'text';

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const DECIMAL = /^-?(?:0|[1-9][0-9]*)\.[0-9]+$/;
const TEMPORAL = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** True for a 64-bit signed integer literal already matching `INTEGER`. */
function inInt64Range(value: string): boolean {
  const digits = value.charCodeAt(0) === 45 /* - */ ? value.length - 1 : value.length;
  if (digits < 19) return true; // 18 digits are always below 2^63
  if (digits > 19) return false;
  const n = BigInt(value);
  return n >= INT64_MIN && n <= INT64_MAX;
}

/**
 * Calendar check for `YYYY-MM-DD`. Year 0000 is refused: PostgreSQL has no
 * year zero (DuckDB accepts it), and a seed must load on both targets.
 */
function validDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const max = m === 2 && leap ? 29 : DAYS_IN_MONTH[m - 1];
  return d <= max;
}

/** Date, timestamp or timestamptz when `value` is a valid one of those, else undefined. */
export function temporalKind(value: string): 'date' | 'timestamp' | 'timestamptz' | undefined {
  const m = TEMPORAL.exec(value);
  if (m === null) return undefined;
  if (!validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return undefined;
  if (m[4] === undefined) return 'date';
  // Seconds stop at 59: leap seconds and `24:00:00` are read differently by the two targets.
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return undefined;
  const zone = m[7];
  if (zone === undefined) return 'timestamp';
  // PostgreSQL accepts offsets up to ±15:59; so does DuckDB.
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 15 || Number(zone.slice(4, 6)) > 59)) return undefined;
  return 'timestamptz';
}

/** Classifies one non-NULL CSV value by the seed type-inference patterns. */
export function classifyValue(value: string): ValueKind {
  const c = value.charCodeAt(0);
  if (c === 45 /* - */ || (c >= 48 && c <= 57) /* 0-9 */) {
    if (INTEGER.test(value)) return inInt64Range(value) ? 'integer' : 'text';
    if (DECIMAL.test(value)) return Number.isFinite(Number(value)) ? 'decimal' : 'text';
    return temporalKind(value) ?? 'text';
  }
  if (value.length === 4 || value.length === 5) {
    const lower = value.toLowerCase();
    if (lower === 'true' || lower === 'false') return 'boolean';
  }
  return 'text';
}

const BIT: Readonly<Record<ValueKind, number>> = {
  integer: 1,
  decimal: 2,
  boolean: 4,
  date: 8,
  timestamp: 16,
  timestamptz: 32,
  text: 64,
};

/** The column type for a set of value kinds (`mask` of `BIT`s); mixtures are text. */
export function typeForKinds(mask: number): LogicalType {
  switch (mask) {
    case BIT.integer:
      return 'integer';
    case BIT.decimal:
    case BIT.integer | BIT.decimal:
      return 'float';
    case BIT.boolean:
      return 'boolean';
    case BIT.date:
      return 'date';
    case BIT.timestamp:
      return 'timestamp';
    case BIT.timestamptz:
      return 'timestamptz';
    default:
      return 'text'; // all-NULL (0), text seen, or a mixture such as date + timestamp
  }
}

export function kindBit(kind: ValueKind): number {
  return BIT[kind];
}

/** Infers one logical type per column over the non-NULL values of `rows`. */
export function inferColumnTypes(width: number, rows: readonly (readonly (string | null)[])[]): LogicalType[] {
  const masks = new Array<number>(width).fill(0);
  for (const row of rows) {
    for (let i = 0; i < width; i++) {
      const v = row[i];
      if (v === null || v === undefined || masks[i] & BIT.text) continue; // text is final
      masks[i] |= BIT[classifyValue(v)];
    }
  }
  return masks.map(typeForKinds);
}

/**
 * Types the columns of a parsed text table and renders booleans as lowercase
 * `true`/`false` (both targets accept any case; one spelling keeps loaders and
 * tests simple). Every other value is kept exactly as written.
 */
export function typeTextTable(header: readonly string[], rows: readonly (readonly (string | null)[])[]): SeedTable {
  const types = inferColumnTypes(header.length, rows);
  const booleanColumns = types.flatMap((t, i) => (t === 'boolean' ? [i] : []));
  let typedRows = rows;
  if (booleanColumns.length > 0) {
    typedRows = rows.map((row) => {
      const copy = row.slice();
      for (const i of booleanColumns) {
        const v = copy[i];
        if (v !== null && v !== undefined) copy[i] = v.toLowerCase();
      }
      return copy;
    });
  }
  return { columns: header.map((name, i) => ({ name, type: types[i] })), rows: typedRows };
}
