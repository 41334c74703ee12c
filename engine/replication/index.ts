/** Replication jobs: planning streams into tasks and running one stream. */
export { expandStreams, selectStreams, splitTableKey, type ExpandedStream, type SourceCatalog, type SourceKind } from './expand.js';
export { planReplication, fileEnvLookup, substitute, type PlanOptions } from './plan.js';
export { runStream, needsDuckdbActor, type StreamRuntime } from './run-stream.js';
export { fileRoot, listFiles } from './file-catalog.js';
export { pgTables, duckTables } from './catalog.js';
export { PgSession } from './pg-session.js';
export { DuckSession } from './duck-session.js';
export type { FileEntry, StreamOutcome, StreamPlan } from './plan-types.js';
