/**
 * The Job resource as responses carry it: every field, `config`
 * fully populated, `executed` (the latest execution's start_time) and
 * `next_run` (the next scheduled fire; null when inactive or unscheduled).
 */
import { nextRun } from '../jobs/cron.js';
import type { JobRecord, StateStore } from '../state/store.js';

/** The stored job without `project_id` (internal), plus the two computed fields. */
export type JobView = Omit<JobRecord, 'project_id'> & {
  readonly executed: string | null;
  readonly next_run: string | null;
};

export function nextRunOf(job: Pick<JobRecord, 'active' | 'schedules' | 'timezone'>, now: Date): string | null {
  if (!job.active || job.schedules.length === 0) return null;
  return nextRun(job.schedules, job.timezone, now)?.toISOString() ?? null;
}

export function jobView(job: JobRecord, executed: string | null, now: Date): JobView {
  const c = job.config;
  return {
    id: job.id,
    name: job.name,
    type: job.type,
    file_name: job.file_name,
    description: job.description,
    active: job.active,
    default: job.default,
    streams: [...job.streams],
    tags: [...job.tags],
    schedules: [...job.schedules],
    timezone: job.timezone,
    policy: job.policy,
    config: { mode: c.mode ?? null, threads: c.threads, vars: { ...c.vars }, timeout: c.timeout, retries: c.retries },
    created: job.created,
    updated: job.updated,
    executed,
    next_run: nextRunOf(job, now),
  };
}

/** Views of many jobs with one `executed` query. */
export async function jobViews(store: StateStore, jobs: readonly JobRecord[], now = new Date()): Promise<JobView[]> {
  if (jobs.length === 0) return [];
  const started = await store.latestStartTimes(jobs.map((j) => j.id));
  return jobs.map((j) => jobView(j, started.get(j.id) ?? null, now));
}
