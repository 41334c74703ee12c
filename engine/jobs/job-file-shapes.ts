/**
 * The shapes of the three YAML job files — their keys, value types and
 * fixed sets of values. The validators take their key sets and enums from
 * here (so a key added here is accepted there), and schemas/*.schema.json
 * are generated from them for editors. The validators still check what a
 * shape cannot say: positions, connection kinds, expressions, cross-key
 * rules; a test requires both to agree on every example and on a corpus of
 * bad files.
 */
import { array, boolean, enums, integer, literal, number, object, string, unknown, type Struct } from 'superstruct';
import { described, field, mapOf, oneOf } from '../schemas/shape.js';
import { MONITOR_METRICS } from './monitor-metrics.js';
import { BUILD_COMMANDS, HTTP_METHODS, LOG_LEVELS, ON_FAILURE, STEP_KEYS, STEP_TYPES, COMMON_STEP_KEYS, type StepType } from './pipeline-model.js';
import { COLUMN_CASINGS, COMPRESSIONS, FILE_FORMATS, MERGE_STRATEGIES, REPLICATION_MODES } from './replication-model.js';

const text = string();
const connectionName = described(string(), 'a connection name from env.yaml, ~/.service/env.yaml or a URL environment variable');
/** `env:` — names to a string, number or boolean. */
const EnvMap = described(mapOf(oneOf([string(), number(), boolean()])), 'variables for ${NAME} in this file');
const stringOrList = oneOf([string(), array(string())]);

export const SourceOptionsShape = object({
  format: field(enums(FILE_FORMATS)),
  header: field(boolean()),
  delimiter: field(text),
  quote: field(text),
  escape: field(text),
  compression: field(enums(COMPRESSIONS)),
  null_if: field(text),
  empty_as_null: field(boolean()),
  datetime_format: field(text),
  flatten: field(boolean()),
  range: field(described(string(), '"start,end" for backfill')),
  limit: field(integer()),
});

/** Database and file target options (the validator narrows them to the target's kind). */
export const DATABASE_TARGET_KEYS: readonly string[] = ['column_casing', 'add_new_columns', 'adjust_column_type', 'merge_strategy', 'pre_sql', 'post_sql', 'batch_limit'];
export const FILE_TARGET_KEYS: readonly string[] = ['format', 'header', 'delimiter', 'compression', 'file_max_rows'];
export const TargetOptionsShape = object({
  column_casing: field(enums(COLUMN_CASINGS)),
  add_new_columns: field(boolean()),
  adjust_column_type: field(boolean()),
  merge_strategy: field(enums(MERGE_STRATEGIES)),
  pre_sql: field(text),
  post_sql: field(text),
  batch_limit: field(described(integer(), 'rows per load statement on a database target, at least 1 (default 50000)')),
  format: field(enums(FILE_FORMATS)),
  header: field(boolean()),
  delimiter: field(text),
  compression: field(enums(COMPRESSIONS)),
  file_max_rows: field(integer()),
});

export const StreamSettingsShape = object({
  mode: field(enums(REPLICATION_MODES)),
  object: field(described(string(), 'the target table or file; may use {stream_table}, {stream_schema}, …')),
  primary_key: field(stringOrList),
  update_key: field(text),
  select: field(array(string())),
  where: field(text),
  sql: field(described(string(), 'a query, or file://path/in/project.sql')),
  source_options: field(SourceOptionsShape),
  target_options: field(TargetOptionsShape),
  disabled: field(boolean()),
  description: field(text),
});

export const ReplicationShape = object({
  source: connectionName,
  target: connectionName,
  defaults: field(StreamSettingsShape),
  streams: described(mapOf(oneOf([StreamSettingsShape, literal(null)])), 'stream name (schema.table, a wildcard schema.*, or a file path) to its settings'),
  env: field(EnvMap),
});

export const MonitorSettingsShape = object({
  row_count: field(boolean()),
  freshness_column: field(text),
  freshness_threshold: field(described(string(), 'a duration such as 90s, 6h, 1h30m, 7d')),
  columns: field(mapOf(array(enums(MONITOR_METRICS)))),
  disabled: field(boolean()),
});

export const MonitorShape = object({
  connection: connectionName,
  defaults: field(MonitorSettingsShape),
  objects: described(mapOf(oneOf([MonitorSettingsShape, literal(null)])), 'schema.table or schema.* to its checks'),
  schemata: field(object({ exclude: field(array(string())) })),
  env: field(EnvMap),
});

/** Values of the step keys whose set is fixed; every other step value is checked by the validator. */
const STEP_VALUE: Readonly<Record<string, Struct<any, any>>> = {
  type: enums(STEP_TYPES),
  id: described(string(), 'letters, digits and _; referenced as state.<id>'),
  name: text,
  if: oneOf([string(), boolean()]),
  on_failure: enums(ON_FAILURE),
  goto: text,
  level: enums(LOG_LEVELS),
  method: enums(HTTP_METHODS),
  command: unknown(),
};

function stepShape(type: StepType): Struct<any, any> {
  const keys = [...COMMON_STEP_KEYS, ...STEP_KEYS[type]];
  const fields: Record<string, Struct<any, any>> = {};
  for (const k of keys) {
    if (k === 'type') fields[k] = field(literal(type));
    else if (k === 'steps') fields[k] = field(array(unknown()));
    else if (k === 'command' && type === 'build') fields[k] = field(enums(BUILD_COMMANDS));
    else fields[k] = field(STEP_VALUE[k] ?? unknown());
  }
  return described(object(fields), `a ${type} step`);
}

export const StepShape = oneOf(STEP_TYPES.map(stepShape) as unknown as [Struct<any, any>, Struct<any, any>, ...Struct<any, any>[]]);

export const PipelineShape = object({
  steps: described(array(StepShape), 'the steps, run in order'),
  env: field(EnvMap),
});


