/**
 * One table's monitor metrics in one statement (one scan, one round trip):
 * `SELECT COUNT(*), <freshness max>, <per column: nulls, distinct, min, max>
 * FROM <table>`. Pure: builds the SQL text and reads the single result row
 * back into JSON-safe values.
 */
import type { MonitorMetric } from '../jobs/index.js';
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { Relation, TargetType, ValueCategory } from '../targets/target.js';
import { aggregateSql } from './aggregate-sql.js';
import type { ColumnMetrics, MetricValue } from './metrics.js';

export interface ColumnRequest {
  readonly name: string;
  readonly category: ValueCategory;
  readonly metrics: readonly MonitorMetric[];
}

export interface MeasureRequest {
  readonly relation: Relation;
  readonly freshness?: { readonly column: string; readonly category: ValueCategory };
  readonly columns: readonly ColumnRequest[];
}

export interface Measured {
  readonly rowCount: number;
  /** MAX(freshness column) in the fixed text shape of aggregate-sql.ts; null when none. */
  readonly freshnessText: string | null;
  readonly columns: Readonly<Record<string, ColumnMetrics>>;
}

export interface MeasureQuery {
  readonly sql: string;
  read(row: readonly unknown[]): Measured;
}

function toCount(v: unknown): number {
  const n = typeof v === 'bigint' ? Number(v) : Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const ZERO_FRACTION = /\.0+$/;
const TRAILING_ZEROS = /(\.\d*?)0+$/;

/** A value read back as text, as JSON: numbers that survive the trip, booleans, ISO-8601 dates and timestamps. */
export function decodeValue(raw: string | null, category: ValueCategory): MetricValue | null {
  if (raw === null) return null;
  switch (category) {
    case 'number': {
      const n = Number(raw);
      const exact = Number.isFinite(n) && (!/^-?\d+$/.test(raw) || Number.isSafeInteger(n));
      return exact ? n : raw;
    }
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    case 'date':
      return raw;
    case 'timestamp':
      return isoTimestamp(raw, '');
    case 'timestamptz':
      return isoTimestamp(raw, 'Z');
    case 'string':
      return raw;
  }
}

/** `2025-03-01 02:00:00.120000` → `2025-03-01T02:00:00.12<zone>`; a zero fraction is dropped. */
function isoTimestamp(raw: string, zone: string): string {
  const t = raw.replace(' ', 'T').replace(ZERO_FRACTION, '').replace(TRAILING_ZEROS, '$1');
  return `${t}${zone}`;
}

/** Milliseconds since the epoch of an ISO date or timestamp text (zone-less text is UTC); NaN when not one. */
export function instantOf(iso: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) return Date.parse(`${iso}T00:00:00Z`);
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(iso);
  if (m) {
    const frac = m[3] ? m[3].slice(0, 4) : '';
    const zone = m[4] === undefined ? 'Z' : m[4].length === 3 ? `${m[4]}:00` : m[4];
    return Date.parse(`${m[1]}T${m[2]}${frac}${zone}`);
  }
  return Date.parse(iso);
}

/** The statement for `req` on a target of `type`, and how to read its one row. */
export function measureQuery(type: TargetType, req: MeasureRequest): MeasureQuery {
  const agg = aggregateSql(type);
  const select = ['COUNT(*)'];
  if (req.freshness) select.push(agg.extremeText('MAX', quoteIdent(req.freshness.column), req.freshness.category));
  for (const c of req.columns) {
    const q = quoteIdent(c.name);
    if (c.metrics.includes('null_count')) select.push(`COUNT(*) - COUNT(${q})`);
    if (c.metrics.includes('unique_count')) select.push(`COUNT(DISTINCT ${agg.distinctInput(q, c.category)})`);
    if (c.metrics.includes('min_max')) select.push(agg.extremeText('MIN', q, c.category), agg.extremeText('MAX', q, c.category));
  }
  const sql = `SELECT ${select.join(', ')} FROM ${quoteRelation(req.relation)}`;
  return {
    sql,
    read(row) {
      let i = 0;
      const next = () => row[i++];
      const rowCount = toCount(next());
      const freshnessText = req.freshness ? text(next()) : null;
      const columns: Record<string, ColumnMetrics> = {};
      for (const c of req.columns) {
        const m: ColumnMetrics = {};
        if (c.metrics.includes('null_count')) m.null_count = toCount(next());
        if (c.metrics.includes('unique_count')) m.unique_count = toCount(next());
        if (c.metrics.includes('min_max')) {
          m.min = decodeValue(text(next()), c.category);
          m.max = decodeValue(text(next()), c.category);
        }
        Object.defineProperty(columns, c.name, { value: m, enumerable: true, writable: true, configurable: true });
      }
      return { rowCount, freshnessText, columns };
    },
  };
}
