/**
 * The monitor's change events as pure functions of what was measured: staleness
 * against `freshness_threshold`, and the differences to the baseline's table
 * set and columns. Each message names the object and the metric or column.
 */
import { formatAge, type FreshnessMetric, type MonitorEvent, type SchemaColumn } from './metrics.js';
import { instantOf } from './measure-sql.js';

/**
 * `freshness` for MAX(column) = `maxValue` (ISO text, null when no value):
 * stale when a threshold is set and the age exceeds it or there is no value.
 */
export function freshnessOf(column: string, maxValue: string | null, thresholdSeconds: number | undefined, now: Date): FreshnessMetric {
  const at = maxValue === null ? Number.NaN : instantOf(maxValue);
  const age = Number.isNaN(at) ? null : Math.round(now.getTime() - at) / 1000;
  const threshold = thresholdSeconds ?? null;
  const stale = threshold !== null && (age === null || age > threshold);
  return { column, max_value: maxValue, age_seconds: age, threshold_seconds: threshold, stale };
}

export function staleEvent(table: string, f: FreshnessMetric, thresholdText: string | undefined): MonitorEvent | undefined {
  if (!f.stale || f.threshold_seconds === null) return undefined;
  const threshold = `freshness_threshold ${thresholdText ?? formatAge(f.threshold_seconds)} (${f.threshold_seconds} s)`;
  const message =
    f.age_seconds === null
      ? `${table}: max(${f.column}) has no value (the table is empty), over the ${threshold}`
      : `${table}: max(${f.column}) = ${f.max_value} is ${formatAge(f.age_seconds)} old (${f.age_seconds} s), over the ${threshold}`;
  return { type: 'data_stale', message };
}

export function tableAddedEvent(table: string, wildcard: string, baselineExecId: string): MonitorEvent {
  return { type: 'table_added', message: `${table}: table added to ${wildcard} since execution ${baselineExecId}` };
}

export function tableDroppedEvent(table: string, wildcard: string, baselineExecId: string): MonitorEvent {
  return { type: 'table_dropped', message: `${table}: table dropped from ${wildcard} since execution ${baselineExecId}` };
}

/** column_added / column_dropped / column_type_altered, in the current then the baseline column order. */
export function schemaChangeEvents(table: string, now: readonly SchemaColumn[], before: readonly SchemaColumn[]): MonitorEvent[] {
  const old = new Map(before.map((c) => [c.name, c.type]));
  const cur = new Map(now.map((c) => [c.name, c.type]));
  const events: MonitorEvent[] = [];
  for (const c of now) {
    const was = old.get(c.name);
    if (was === undefined) events.push({ type: 'column_added', message: `${table}: column ${c.name} (${c.type}) added` });
    else if (was !== c.type) events.push({ type: 'column_type_altered', message: `${table}: column ${c.name} changed type from ${was} to ${c.type}` });
  }
  for (const c of before) {
    if (!cur.has(c.name)) events.push({ type: 'column_dropped', message: `${table}: column ${c.name} (${c.type}) dropped` });
  }
  return events;
}
