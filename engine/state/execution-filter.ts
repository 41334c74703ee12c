/**
 * The filter, order and limit of an ExecutionQuery as one SQL text for both
 * backends: listExecutions (sql-store.ts) and the SQLite JSON page
 * (sqlite-execution-page.ts) read the same rows in the same order.
 */
import type { ExecutionQuery } from './store.js';
import { assertLimit, canonicalTime } from './records.js';

export interface ExecutionFilter {
  /** `WHERE …` of executions (alias `e`), `ORDER BY …` and `LIMIT $n` included; each `$n` once, in order. */
  readonly clause: string;
  readonly params: readonly unknown[];
}

/** The filter, order and limit of `q`; null when nothing can match (an empty status list). */
export function executionFilter(q: ExecutionQuery): ExecutionFilter | null {
  assertLimit(q.limit);
  const params: unknown[] = [];
  const p = (v: unknown): string => `$${params.push(v)}`;
  const where = [`project_id = ${p(q.projectId)}`];
  if (q.execId !== undefined) where.push(`exec_id = ${p(q.execId)}`);
  if (q.jobId !== undefined) where.push(`job_id = ${p(q.jobId)}`);
  if (q.status !== undefined) {
    const list = typeof q.status === 'string' ? [q.status] : q.status;
    if (list.length === 0) return null;
    where.push(list.length === 1 ? `status = ${p(list[0])}` : `status IN (${list.map(p).join(', ')})`);
  }
  if (q.period) {
    where.push(`start_time >= ${p(canonicalTime(q.period[0], 'period start'))} AND start_time < ${p(canonicalTime(q.period[1], 'period end'))}`);
  }
  if (q.after) {
    const time = p(canonicalTime(q.after.start_time, 'after start_time'));
    where.push(`(start_time, exec_id) ${q.order === 'asc' ? '>' : '<'} (${time}, ${p(q.after.exec_id)})`);
  }
  const dir = q.order === 'asc' ? 'ASC' : 'DESC';
  return { clause: `WHERE ${where.join(' AND ')} ORDER BY start_time ${dir}, exec_id ${dir} LIMIT ${p(q.limit)}`, params };
}
