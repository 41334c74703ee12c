/**
 * The JSON Schemas of the user's files, generated from their shape structs
 * (`npm run schemas` writes them to schemas/; a test fails when they are
 * stale). Editors use them through a first line such as
 * `# yaml-language-server: $schema=../schemas/replication.schema.json`.
 */
import type { Struct } from 'superstruct';
import { EnvFileShape } from '../connections/env-file-shape.js';
import { MonitorShape, PipelineShape, ReplicationShape } from '../jobs/job-file-shapes.js';
import { ConfigShape } from '../project/config.js';
import { structToJsonSchema } from './struct-to-json-schema.js';

interface FileSchema {
  /** File name under schemas/. */
  readonly file: string;
  readonly title: string;
  readonly description: string;
  readonly shape: Struct<any, any>;
}

export const FILE_SCHEMAS: readonly FileSchema[] = [
  { file: 'service_build.schema.json', title: 'service_build.yml', description: 'The config file of a build project: target, dev mode, vars and model defaults.', shape: ConfigShape },
  { file: 'env.schema.json', title: 'env.yaml', description: 'Connections (connections:) and variables (env:) of a project, or of ~/.service/env.yaml.', shape: EnvFileShape },
  { file: 'replication.schema.json', title: 'replication job file', description: 'Copies streams (tables, queries, files) from a source connection to a target connection.', shape: ReplicationShape },
  { file: 'pipeline.schema.json', title: 'pipeline job file', description: 'Steps run in order: log, replication, query, build, http, command, check, group, set, write, read.', shape: PipelineShape },
  { file: 'monitor.schema.json', title: 'monitor job file', description: 'Row counts, freshness and column metrics of database objects, with change events.', shape: MonitorShape },
];

/** The text of one schema file. */
export function renderSchema(f: FileSchema): string {
  const doc = { $schema: 'https://json-schema.org/draft/2020-12/schema', title: f.title, ...structToJsonSchema(f.shape), description: f.description };
  return JSON.stringify(doc, null, 2) + '\n';
}
