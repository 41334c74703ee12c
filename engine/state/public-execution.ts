/**
 * An execution as the API shows it: the record without the store's internal
 * fields (`project_id`, `overrides`), the cluster fields only when set. The
 * SQLite store builds the same JSON text in SQL (sqlite-execution-page.ts);
 * this function is the reference the two are tested against, and what the
 * PostgreSQL store serialises.
 */
import type { ExecutionRecord } from './store.js';

export function publicExecution(e: ExecutionRecord) {
  return {
    exec_id: e.exec_id,
    job_id: e.job_id,
    job_name: e.job_name,
    job_type: e.job_type,
    file_name: e.file_name,
    status: e.status,
    error: e.error,
    trigger: e.trigger,
    start_time: e.start_time,
    end_time: e.end_time,
    duration: e.duration,
    rows: e.rows,
    bytes: e.bytes,
    status_map: e.status_map,
    build: e.build,
    // Cluster mode only: which daemon ran it, on which version of the project files.
    ...(e.daemon !== undefined ? { daemon: e.daemon } : {}),
    ...(e.tree_version !== undefined ? { tree_version: e.tree_version } : {}),
  };
}

/** The UTF-8 JSON text of `records` as public executions (an array). */
export function publicExecutionsJson(records: readonly ExecutionRecord[]): Buffer {
  return Buffer.from(JSON.stringify(records.map(publicExecution)));
}
