/** Monitor jobs: planning the objects, measuring one, events against the baseline. */
export { aggregateSql, type AggregateSql } from './aggregate-sql.js';
export { baselineFromTasks, loadBaseline, type Baseline } from './baseline.js';
export { listTables, tableColumns, tableName, type CatalogTable } from './catalog.js';
export { freshnessOf, schemaChangeEvents, staleEvent } from './events.js';
export { droppedObject, measureObject, type MeasureOptions, type MonitorOutcome } from './measure-object.js';
export { decodeValue, instantOf, measureQuery, type ColumnRequest, type MeasureRequest } from './measure-sql.js';
export * from './metrics.js';
export { catalogSchemas, isExcluded, planMonitor, type DroppedObject, type MonitorObjectPlan, type PlannedObject } from './plan.js';
