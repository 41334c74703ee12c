/**
 * A monitor's baseline: the job's last `success` or
 * `warning` execution and the tables its tasks measured, with their schemas.
 * No table of its own: it is read back from the execution and task records.
 * A task that reported `table_dropped` stands for a table that was already
 * gone, so it is not part of the baseline's table set.
 */
import type { StateStore, TaskRecord } from '../state/store.js';
import type { SchemaColumn } from './metrics.js';

export interface Baseline {
  readonly execId: string;
  /** `schema.table` → its columns then (null when that task recorded none). */
  readonly tables: ReadonlyMap<string, readonly SchemaColumn[] | null>;
}

function schemaOf(metrics: Record<string, unknown>): SchemaColumn[] | null {
  const s = metrics.schema;
  if (!Array.isArray(s)) return null;
  const out: SchemaColumn[] = [];
  for (const c of s as unknown[]) {
    if (typeof c !== 'object' || c === null) return null;
    const { name, type } = c as Record<string, unknown>;
    if (typeof name !== 'string' || typeof type !== 'string') return null;
    out.push({ name, type });
  }
  return out;
}

function wasDropped(metrics: Record<string, unknown>): boolean {
  const events = metrics.events;
  return Array.isArray(events) && events.some((e) => typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'table_dropped');
}

/** The tables of a baseline execution's tasks. */
export function baselineFromTasks(execId: string, tasks: readonly TaskRecord[]): Baseline {
  const tables = new Map<string, readonly SchemaColumn[] | null>();
  for (const t of tasks) {
    if (t.mode !== 'monitor' || (t.status !== 'success' && t.status !== 'warning') || t.metrics === null || wasDropped(t.metrics)) continue;
    tables.set(t.stream_name, schemaOf(t.metrics));
  }
  return { execId, tables };
}

/** The job's baseline, or undefined before its first success or warning (no change events then). */
export async function loadBaseline(store: StateStore, projectId: string, jobId: string): Promise<Baseline | undefined> {
  const [exec] = await store.listExecutions({ projectId, jobId, status: ['success', 'warning'], order: 'desc', limit: 1 });
  if (exec === undefined) return undefined;
  return baselineFromTasks(exec.exec_id, await store.listTasks(exec.exec_id, { excludeOutput: true }));
}
