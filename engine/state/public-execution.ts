/**
 * An execution as the API shows it: the record without the store's internal
 * fields (`project_id`, `overrides`), the cluster fields only when set. The
 * SQLite store builds the same JSON text in SQL (sqlite-execution-page.ts);
 * this function is the reference the two are tested against, and what the
 * PostgreSQL store serialises.
 */
import type { ExecutionRecord, StepRecord, TaskRecord } from './store.js';

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

/** A task as the API shows it (`output` only when set, before `metrics`). */
export function publicTask(t: TaskRecord) {
  return {
    exec_id: t.exec_id,
    task_id: t.task_id,
    stream_name: t.stream_name,
    object: t.object,
    mode: t.mode,
    status: t.status,
    error: t.error,
    start_time: t.start_time,
    end_time: t.end_time,
    rows: t.rows,
    bytes: t.bytes,
    ...(t.output !== undefined ? { output: t.output } : {}),
    metrics: t.metrics,
  };
}

/** A step as the API shows it (`output` only when set, before `state`). */
export function publicStep(s: StepRecord) {
  return {
    exec_id: s.exec_id,
    step_id: s.step_id,
    type: s.type,
    status: s.status,
    error: s.error,
    start_time: s.start_time,
    end_time: s.end_time,
    ...(s.output !== undefined ? { output: s.output } : {}),
    state: s.state,
  };
}
