/**
 * The API suite's stored executions and the `GET /execution/list` requests
 * that vary every documented filter, so that no two requests of a run ask
 * for the same page (the daemon's page cache cannot answer any of them).
 *
 * Stored: `count` finished executions, one a second from 2025-01-01T00:00:00Z,
 * of `jobs` jobs in turn (execution i belongs to job i mod jobs), with a
 * status drawn from a fixed hash of i: 70 % success, 15 % error, 10 %
 * warning, 5 % cancelled.
 *
 * Request i (a seeded mix; the same sequence every run): `limit` 10, 25, 50
 * or 100; `order` asc or desc; no status, the `status` parameter or
 * `filters.status` (success, error or warning); half of them a `job_id`
 * filter; and always a `period` — the documented paging cursor ("repeat with
 * order=asc and a period starting at the last start_time seen") — whose start
 * is unique to i at millisecond precision, 10 minutes to 2 days long.
 */
import { openStateStore } from '../../engine/state/open-state-store.js';
import type { ExecutionStatus, NewExecution } from '../../engine/state/store.js';
import { prng } from './random-dag.js';

const SEED_START = Date.parse('2025-01-01T00:00:00Z');

/** Status of stored execution i when statuses are mixed. */
function seededStatus(i: number): ExecutionStatus {
  const h = Math.imul(i, 2654435761) >>> 0;
  const r = h % 20;
  return r < 14 ? 'success' : r < 17 ? 'error' : r < 19 ? 'warning' : 'cancelled';
}

export interface SeedOptions {
  /** Jobs the executions belong to in turn (default 1). */
  readonly jobs?: number;
  /** Statuses as seededStatus (default: every execution `success`). */
  readonly mixedStatuses?: boolean;
}

/** Stores `count` finished query executions, 10,000 per transaction; returns the job ids. */
export async function seedExecutions(stateFile: string, projectId: string, count: number, options: SeedOptions = {}): Promise<string[]> {
  const store = await openStateStore(stateFile);
  try {
    const jobs: string[] = [];
    for (let j = 0; j < (options.jobs ?? 1); j++) {
      const job = await store.createJob({
        project_id: projectId, name: j === 0 ? 'bench' : `bench${j}`, type: 'query', file_name: j === 0 ? 'q.sql' : `q${j}.sql`, description: '', active: false, default: false,
        streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
      });
      jobs.push(job.id);
    }
    for (let b = 0; b < count; b += 10_000) {
      const batch: NewExecution[] = [];
      for (let i = b; i < Math.min(count, b + 10_000); i++) {
        const j = i % jobs.length;
        const t = new Date(SEED_START + i * 1000).toISOString();
        const end = new Date(SEED_START + i * 1000 + 250 + (i % 7) * 100).toISOString();
        batch.push({
          project_id: projectId, job_id: jobs[j]!, job_name: j === 0 ? 'bench' : `bench${j}`, job_type: 'query', file_name: j === 0 ? 'q.sql' : `q${j}.sql`, trigger: 'api',
          status: options.mixedStatuses ? seededStatus(i) : 'success', start_time: t, end_time: end, rows: i % 100, bytes: (i % 100) * 64,
        });
      }
      await store.insertExecutionsBulk(batch);
    }
    return jobs;
  } finally {
    await store.close();
  }
}

const LIMITS = [10, 25, 50, 100];
const STATUSES = ['success', 'error', 'warning'];
const SPANS_MS = [10 * 60_000, 3_600_000, 6 * 3_600_000, 2 * 86_400_000];

/**
 * The path and query of request i over `count` stored executions of `jobIds`.
 * Period starts are SEED_START − 1 h + (i · 7919 mod 10⁸) ms: distinct for
 * every i below 10⁸ (7919 is prime to 10⁸), spread over the stored range.
 */
export function variedListPath(i: number, jobIds: readonly string[], count: number): string {
  const r = prng(i + 1); // request i is the same in every run
  const limit = LIMITS[Math.floor(r() * LIMITS.length)]!;
  const order = r() < 0.5 ? 'asc' : 'desc';
  const statusKind = r();
  const status = STATUSES[Math.floor(r() * STATUSES.length)]!;
  const job = r() < 0.5 ? jobIds[Math.floor(r() * jobIds.length)] : undefined;
  const range = count * 1000 + 2 * 3_600_000;
  const startMs = SEED_START - 3_600_000 + ((i * 7919) % 100_000_000) % range;
  const span = SPANS_MS[Math.floor(r() * SPANS_MS.length)]!;
  const filters: Record<string, unknown> = {};
  if (job !== undefined) filters.job_id = job;
  if (statusKind >= 0.5 && statusKind < 0.75) filters.status = status;
  filters.period = [new Date(startMs).toISOString(), new Date(startMs + span).toISOString()];
  const statusParam = statusKind >= 0.75 ? `&status=${status}` : '';
  return `/execution/list?limit=${limit}&order=${order}${statusParam}&filters=${encodeURIComponent(JSON.stringify(filters))}`;
}
