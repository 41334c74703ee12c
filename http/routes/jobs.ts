/**
 * Jobs: list, get, save, delete, run. A run creates the
 * execution (and applies the job's policy) before answering; the work runs
 * in the background. `Service-Trigger: manual` marks CLI runs.
 */
import type { Context } from 'koa';
import { array, boolean, integer, object, optional, string } from 'superstruct';
import type { ProjectService, RunRequester } from '../../engine/daemon-projects/index.js';
import type { Trigger } from '../../engine/state/store.js';
import { badRequest } from '../http-error.js';
import { route, type Route } from '../route.js';
import { requiredQuery } from './files.js';
import { freeMap, readOnly } from './schema.js';

export interface JobsDeps {
  readonly projects: ProjectService;
  readonly runs: RunRequester;
}

const JobConfigInput = object({
  mode: optional(string()),
  threads: optional(integer()),
  vars: optional(freeMap()),
  timeout: optional(integer()),
  retries: optional(integer()),
});

const JobInput = object({
  id: optional(string()),
  name: string(),
  type: string(),
  file_name: string(),
  description: optional(string()),
  active: optional(boolean()),
  default: optional(readOnly()),
  streams: optional(array(string())),
  tags: optional(array(string())),
  schedules: optional(array(string())),
  timezone: optional(string()),
  policy: optional(string()),
  config: optional(JobConfigInput),
  created: optional(readOnly()),
  updated: optional(readOnly()),
  executed: optional(readOnly()),
  next_run: optional(readOnly()),
});

/** `manual` from the CLI, `api` without the header, 400 for anything else. */
export function runTrigger(ctx: Context): Trigger {
  const raw = ctx.get('service-trigger');
  if (raw === '') return 'api';
  if (raw.trim().toLowerCase() === 'manual') return 'manual';
  throw badRequest(`header "Service-Trigger" must be "manual", got ${JSON.stringify(raw)}`);
}

export function jobRoutes(deps: JobsDeps): Route[] {
  const { projects, runs } = deps;
  return [
    route({
      method: 'POST',
      path: '/project/job/list',
      summary: 'List jobs (exact-match filters), sorted by created then id',
      auth: true,
      body: object({ name: optional(string()), file_name: optional(string()), type: optional(string()) }),
      handler: async ({ projectId }, body) => ({ jobs: await projects.listJobs(projectId, body) }),
    }),
    route({
      method: 'GET',
      path: '/project/job/get',
      summary: 'One job',
      auth: true,
      query: [{ name: 'job_id', required: true, description: 'the job id' }],
      handler: ({ ctx, projectId }) => projects.getJob(projectId, requiredQuery(ctx, 'job_id')),
    }),
    route({
      method: 'POST',
      path: '/project/job/save',
      summary: 'Create a job (no id) or replace one (full replace)',
      auth: true,
      body: object({ job: JobInput }),
      handler: ({ projectId }, body) => projects.saveJob(projectId, body.job),
    }),
    route({
      method: 'POST',
      path: '/project/job/delete',
      summary: 'Delete a job that is not a default job; its executions are kept',
      auth: true,
      body: object({ job_id: string() }),
      handler: ({ projectId }, body) => projects.deleteJob(projectId, body.job_id),
    }),
    route({
      method: 'POST',
      path: '/project/job/run',
      summary: 'Start an execution of a job, with per-run overrides',
      auth: true,
      body: object({
        job_id: string(),
        streams: optional(array(string())),
        mode: optional(string()),
        select: optional(array(string())),
        vars: optional(freeMap()),
      }),
      handler: async ({ ctx, projectId }, body) => {
        const trigger = runTrigger(ctx);
        return { exec_id: await projects.runJob(projectId, runs, body, trigger) };
      },
    }),
  ];
}
