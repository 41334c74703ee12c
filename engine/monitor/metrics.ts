/**
 * What a monitor task measures, as plain JSON-safe data: the
 * `metrics` of its Task record. Events ride inside; any event makes
 * the task `warning`.
 */

export const MONITOR_EVENT_TYPES = ['data_stale', 'table_added', 'table_dropped', 'column_added', 'column_dropped', 'column_type_altered'] as const;
export type MonitorEventType = (typeof MONITOR_EVENT_TYPES)[number];

export interface MonitorEvent {
  readonly type: MonitorEventType;
  /** Names the object and the metric or column, e.g. `public.orders: updated_at is 25200 s old, over the freshness_threshold 6h`. */
  readonly message: string;
}

export interface SchemaColumn {
  readonly name: string;
  /** As the database's information_schema names it. */
  readonly type: string;
}

/** A column value as JSON: numbers and booleans as such, dates and timestamps as ISO-8601 text, anything else as text. */
export type MetricValue = number | boolean | string;

export interface ColumnMetrics {
  null_count?: number;
  unique_count?: number;
  min?: MetricValue | null;
  max?: MetricValue | null;
}

export interface FreshnessMetric {
  readonly column: string;
  /** ISO-8601 text of MAX(column); null when the table (or the column) holds no value. */
  readonly max_value: string | null;
  /** now − max_value in seconds (millisecond precision); null when max_value is null. */
  readonly age_seconds: number | null;
  readonly threshold_seconds: number | null;
  readonly stale: boolean;
}

export interface MonitorMetrics {
  /** null when `row_count: false`. */
  readonly row_count: number | null;
  readonly freshness: FreshnessMetric | null;
  readonly columns: Readonly<Record<string, ColumnMetrics>>;
  readonly schema: readonly SchemaColumn[];
  readonly events: readonly MonitorEvent[];
}

/** The task's `warning` (its Task `error` text): every event as `<type>: <message>`; undefined without events. */
export function eventsWarning(events: readonly MonitorEvent[]): string | undefined {
  return events.length === 0 ? undefined : events.map((e) => `${e.type}: ${e.message}`).join('; ');
}

/** `25200` → `7h`, `5430` → `1h30m30s`, `0.5` → `0.5s`: the job-file duration grammar, for log lines. */
export function formatAge(seconds: number): string {
  if (seconds < 0) return `-${formatAge(-seconds)}`;
  if (seconds < 60) return `${Math.round(seconds * 1000) / 1000}s`;
  let rest = Math.floor(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.join('');
}

/** The same facts as the metrics, as the readable lines of the task's `output`. */
export function metricsLines(table: string, m: MonitorMetrics): string[] {
  const lines: string[] = [];
  if (m.schema.length > 0) lines.push(`schema: ${m.schema.map((c) => `${c.name} ${c.type}`).join(', ')}`);
  if (m.row_count !== null) lines.push(`row_count: ${m.row_count}`);
  const f = m.freshness;
  if (f !== null) {
    const threshold = f.threshold_seconds === null ? 'no threshold' : `threshold ${formatAge(f.threshold_seconds)}`;
    const age = f.age_seconds === null ? 'no value' : `age ${formatAge(f.age_seconds)} (${f.age_seconds} s)`;
    lines.push(`freshness: max(${f.column}) = ${f.max_value ?? 'NULL'}, ${age}, ${threshold}${f.stale ? ': STALE' : ''}`);
  }
  for (const [name, c] of Object.entries(m.columns)) {
    const parts = Object.entries(c).map(([k, v]) => `${k}=${v === null ? 'NULL' : String(v)}`);
    lines.push(`column ${name}: ${parts.join(' ')}`);
  }
  for (const e of m.events) lines.push(`event ${e.type}: ${e.message}`);
  if (m.events.length === 0) lines.push(`${table}: no events`);
  return lines;
}
