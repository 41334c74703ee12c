/**
 * dbt's Column as templates see it (`adapter.get_columns_in_relation`,
 * `api.Column.create`): name, quoted, data_type, dtype, is_string(),
 * is_number(), string_size() … with PostgreSQL's and DuckDB's type names.
 */
import { callArgs } from '../../template/call-args.js';

const STRING = ['text', 'character varying', 'character', 'varchar', 'char', 'string', 'bpchar'];
const INTEGER = ['smallint', 'integer', 'bigint', 'smallserial', 'serial', 'bigserial', 'int2', 'int4', 'int8', 'int', 'tinyint', 'hugeint', 'utinyint', 'usmallint', 'uinteger', 'ubigint'];
const FLOAT = ['real', 'float4', 'float', 'double precision', 'float8', 'double'];
const NUMERIC = ['numeric', 'decimal'];

/** What `api.Column.translate_type` maps dbt's generic labels to, per warehouse. */
const LABELS: Record<string, Record<string, string>> = {
  postgres: { STRING: 'TEXT', TIMESTAMP: 'TIMESTAMP', FLOAT: 'FLOAT', INTEGER: 'INT', BOOLEAN: 'BOOLEAN' },
  duckdb: { STRING: 'TEXT', TIMESTAMP: 'TIMESTAMP', FLOAT: 'DOUBLE', INTEGER: 'INT', BOOLEAN: 'BOOLEAN' },
};

const base = (dtype: string) => dtype.toLowerCase().replace(/\(.*$/, '').trim();

export class DbtColumn {
  constructor(
    readonly column: string,
    readonly dtype: string,
    readonly char_size: number | null = null,
    readonly numeric_precision: number | null = null,
    readonly numeric_scale: number | null = null,
  ) {}
  get name(): string {
    return this.column;
  }
  get quoted(): string {
    return `"${this.column.replaceAll('"', '""')}"`;
  }
  get data_type(): string {
    if (this.dtype.includes('(')) return this.dtype;
    const t = base(this.dtype);
    // As dbt-postgres: text, and varchar without a size, keep their name.
    if (this.is_string()) return t === 'text' || this.char_size === null ? this.dtype : `character varying(${this.char_size})`;
    if (this.is_numeric() && this.numeric_precision !== null && this.numeric_scale !== null) return `${this.dtype}(${this.numeric_precision},${this.numeric_scale})`;
    return this.dtype;
  }
  is_string(): boolean {
    return STRING.includes(base(this.dtype));
  }
  is_integer(): boolean {
    return INTEGER.includes(base(this.dtype));
  }
  is_float(): boolean {
    return FLOAT.includes(base(this.dtype));
  }
  is_numeric(): boolean {
    return NUMERIC.includes(base(this.dtype));
  }
  is_number(): boolean {
    return this.is_integer() || this.is_float() || this.is_numeric();
  }
  string_size(): number {
    if (!this.is_string()) throw new Error(`Called string_size() on non-string field ${this.column} (${this.dtype})`);
    return this.char_size ?? 256;
  }
  can_expand_to(other: DbtColumn): boolean {
    return this.is_string() && other.is_string() && this.string_size() < other.string_size();
  }
  literal(value: unknown): string {
    return `${String(value)}::${this.data_type}`;
  }
  toString(): string {
    return `<Column ${this.column} (${this.data_type})>`;
  }
}

/** `api.Column`: the class-level helpers dbt macros call. */
export function columnApi(adapterType: string): Record<string, unknown> {
  const labels = LABELS[adapterType] ?? LABELS.postgres!;
  const translate = (dtype: unknown) => labels[String(dtype).toUpperCase()] ?? String(dtype);
  return {
    translate_type: translate,
    create: (name: unknown, labelOrDtype: unknown) => new DbtColumn(String(name), translate(labelOrDtype)),
    string_type: (size: unknown) => `character varying(${String(size)})`,
    numeric_type: (dtype: unknown, precision: unknown, scale: unknown) =>
      precision === null || precision === undefined || scale === null || scale === undefined ? String(dtype) : `${String(dtype)}(${String(precision)},${String(scale)})`,
    from_description: (...args: unknown[]) => {
      const { positional } = callArgs(args);
      const raw = String(positional[1] ?? '');
      const m = /^([^(]+)(?:\((\d+)(?:\s*,\s*(\d+))?\))?/.exec(raw);
      const t = (m?.[1] ?? raw).trim();
      const size = m?.[2] === undefined ? null : Number(m[2]);
      return STRING.includes(t.toLowerCase()) ? new DbtColumn(String(positional[0]), t, size) : new DbtColumn(String(positional[0]), t, null, size, m?.[3] === undefined ? null : Number(m[3]));
    },
  };
}
