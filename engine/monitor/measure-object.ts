/**
 * The work of one monitor task: read the object's columns,
 * check the configured ones exist, run the one metrics statement, and turn
 * what came back into task metrics with their change events. Failures are
 * EngineErrors whose message is the Task's `error` (`object <t> does not
 * exist`, `column <c> does not exist in <t>`).
 */
import { EngineError, errorChain } from '../errors.js';
import { MONITOR_METRICS, type MonitorMetric } from '../jobs/index.js';
import { dialectFor } from '../targets/index.js';
import type { TargetSession, TargetType, ValueCategory } from '../targets/target.js';
import type { Baseline } from './baseline.js';
import { tableColumns } from './catalog.js';
import { freshnessOf, schemaChangeEvents, staleEvent, tableAddedEvent, tableDroppedEvent } from './events.js';
import { decodeValue, measureQuery, type ColumnRequest } from './measure-sql.js';
import { eventsWarning, metricsLines, type FreshnessMetric, type MonitorEvent, type MonitorMetrics, type SchemaColumn } from './metrics.js';
import type { DroppedObject, PlannedObject } from './plan.js';

export interface MeasureOptions {
  readonly targetType: TargetType;
  readonly baseline: Baseline | undefined;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** `${NAME}` substitution for string values (`freshness_column`). */
  readonly substitute: (text: string) => string;
}

/** A monitor task's result: `rows` is the row count (0 when not counted); a warning when there are events. */
export interface MonitorOutcome {
  readonly rows: number;
  readonly metrics: MonitorMetrics;
  readonly warning?: string;
}

function outcome(table: string, metrics: MonitorMetrics, log: (line: string) => void): MonitorOutcome {
  for (const line of metricsLines(table, metrics)) log(line);
  const warning = eventsWarning(metrics.events);
  return { rows: metrics.row_count ?? 0, metrics, ...(warning !== undefined ? { warning } : {}) };
}

/** The columns to measure, in the table's order: `"*"` metrics joined with the column's own. */
function columnRequests(obj: PlannedObject, schema: readonly SchemaColumn[], category: (type: string) => ValueCategory): ColumnRequest[] {
  const configured = obj.settings.columns ?? {};
  const byName = new Map(schema.map((c) => [c.name, c]));
  for (const name of Object.keys(configured)) {
    if (name !== '*' && !byName.has(name)) throw new EngineError('node', `column ${name} does not exist in ${obj.table}`);
  }
  const all = configured['*'] ?? [];
  const out: ColumnRequest[] = [];
  for (const c of schema) {
    const own = Object.prototype.hasOwnProperty.call(configured, c.name) ? configured[c.name]! : [];
    const wanted = new Set<MonitorMetric>([...all, ...own]);
    const metrics = MONITOR_METRICS.filter((m) => wanted.has(m));
    if (metrics.length > 0) out.push({ name: c.name, category: category(c.type), metrics });
  }
  return out;
}

export async function measureObject(session: TargetSession, obj: PlannedObject, opts: MeasureOptions): Promise<MonitorOutcome> {
  const { table, settings } = obj;
  const dialect = dialectFor(opts.targetType)!;
  opts.log(`measuring ${table}${obj.matchedBy !== table ? ` (matched by ${obj.matchedBy})` : ''}`);
  const read = async <T>(what: () => Promise<T>): Promise<T> => {
    try {
      return await what();
    } catch (err) {
      if (err instanceof EngineError && err.code === 'cancelled') throw err;
      throw new EngineError('node', `could not measure ${table}: ${errorChain(err)}`, err);
    }
  };
  const schema = await read(() => tableColumns(session, obj.relation));
  if (schema.length === 0 && (await read(() => session.relationKind(obj.relation))) === null) {
    throw new EngineError('node', `object ${table} does not exist`);
  }
  const types = new Map(schema.map((c) => [c.name, c.type]));
  const freshColumn = settings.freshness_column === undefined ? undefined : opts.substitute(settings.freshness_column);
  let freshCategory: ValueCategory | undefined;
  if (freshColumn !== undefined) {
    const type = types.get(freshColumn);
    if (type === undefined) throw new EngineError('node', `column ${freshColumn} does not exist in ${table}`);
    freshCategory = dialect.valueCategory(type);
    if (freshCategory === 'number' || freshCategory === 'boolean') {
      throw new EngineError('node', `freshness_column ${freshColumn} of ${table} must be a date or timestamp column, not ${type}`);
    }
  }
  const columns = columnRequests(obj, schema, (t) => dialect.valueCategory(t));
  const countRows = settings.row_count !== false;
  let rowCount: number | null = null;
  let freshness: FreshnessMetric | null = null;
  let columnMetrics: MonitorMetrics['columns'] = {};
  if (countRows || freshColumn !== undefined || columns.length > 0) {
    const q = measureQuery(opts.targetType, {
      relation: obj.relation,
      ...(freshColumn !== undefined ? { freshness: { column: freshColumn, category: freshCategory! } } : {}),
      columns,
    });
    const result = await read(() => session.query(q.sql));
    const m = q.read(result.rows[0] ?? []);
    if (countRows) rowCount = m.rowCount;
    columnMetrics = m.columns;
    if (freshColumn !== undefined) {
      const max = decodeValue(m.freshnessText, freshCategory!);
      freshness = freshnessOf(freshColumn, max === null ? null : String(max), settings.freshness_threshold_seconds, opts.now());
      if (freshness.max_value !== null && freshness.age_seconds === null) {
        throw new EngineError('node', `freshness_column ${freshColumn} of ${table} holds ${JSON.stringify(freshness.max_value)}, which is not a date or timestamp`);
      }
    }
  }
  const events: MonitorEvent[] = [];
  const { baseline } = opts;
  if (baseline !== undefined && obj.added) events.push(tableAddedEvent(table, obj.matchedBy, baseline.execId));
  const before = baseline?.tables.get(table);
  if (obj.tracked && before) events.push(...schemaChangeEvents(table, schema, before));
  const stale = freshness === null ? undefined : staleEvent(table, freshness, settings.freshness_threshold);
  if (stale) events.push(stale);
  return outcome(table, { row_count: rowCount, freshness, columns: columnMetrics, schema, events }, opts.log);
}

/** The task of a table that left a wildcard's set since the baseline: no measurement, one `table_dropped` event. */
export function droppedObject(obj: DroppedObject, log: (line: string) => void): MonitorOutcome {
  log(`${obj.table} no longer exists (matched by ${obj.matchedBy} in execution ${obj.baselineExecId})`);
  const events = [tableDroppedEvent(obj.table, obj.matchedBy, obj.baselineExecId)];
  return outcome(obj.table, { row_count: null, freshness: null, columns: {}, schema: [], events }, log);
}
