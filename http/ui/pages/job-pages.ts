/** Jobs: the list (type, file, schedule, next run, last status, Run), a job's page with Run (with vars), activate/deactivate and its executions. */
import { EngineError } from '../../../engine/errors.js';
import type { JobView } from '../../../engine/daemon-projects/job-view.js';
import { executionView } from '../../routes/executions.js';
import { historySvg } from '../charts/history.js';
import { trusted } from '../views.js';
import { HttpError } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, redirect, type UiRequest, type UiRoute } from '../ui-route.js';

/** Runs drawn in a job's history chart (the newest); its table lists the newest 20 of them. */
export const HISTORY_RUNS = 40;
const VAR_LINE = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/;

/** `NAME=value` lines (blank lines and `#` comments skipped) → vars; a bad line is named. */
export function parseVarLines(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === '' || raw.trim().startsWith('#')) continue;
    const m = VAR_LINE.exec(raw);
    if (!m) throw new HttpError(400, 'bad_request', `variables line ${i + 1}: expected NAME=value, got ${JSON.stringify(raw.trim())}`);
    vars[m[1]!] = m[2]!;
  }
  return vars;
}

export function jobPages(deps: ConsoleDeps): UiRoute[] {
  const { store, projects } = deps;

  async function jobPage(req: UiRequest, jobId: string, extra: { runError?: string; vars?: string } = {}, status?: number) {
    const job = await projects.getJob(req.projectId, jobId);
    const runs = (await store.listExecutions({ projectId: req.projectId, jobId, order: 'desc', limit: HISTORY_RUNS })).map(executionView);
    const bars = runs.map((e) => ({ execId: e.exec_id, status: e.status, duration: e.duration, startTime: e.start_time, note: `${e.rows} rows` })).reverse();
    const history = runs.length > 0 ? { count: runs.length, svg: trusted(historySvg(bars, `durations of the last ${runs.length} runs of ${job.name}`)) } : undefined;
    return page('job', { title: `Job ${job.name}`, nav: 'jobs', job, executions: runs.slice(0, 20), ...(history ? { history } : {}), ...extra }, status);
  }

  return [
    {
      method: 'GET',
      pattern: /^\/ui\/jobs$/,
      handler: async (req) => {
        const list = await projects.listJobs(req.projectId, {});
        const rows = await Promise.all(
          list.map(async (job: JobView) => {
            const [last] = await store.listExecutions({ projectId: req.projectId, jobId: job.id, order: 'desc', limit: 1 });
            return { job, last: last ? { exec_id: last.exec_id, status: last.status } : undefined };
          }),
        );
        return page('jobs', { title: 'Jobs', nav: 'jobs', jobs: rows });
      },
    },
    { method: 'GET', pattern: /^\/ui\/jobs\/([^/]+)$/, handler: (req) => jobPage(req, req.params[0]!) },
    {
      method: 'POST',
      pattern: /^\/ui\/jobs\/([^/]+)\/run$/,
      handler: async (req) => {
        const jobId = req.params[0]!;
        const text = req.form.get('vars') ?? '';
        try {
          const vars = parseVarLines(text);
          const execId = await projects.runJob(req.projectId, deps.executions, { job_id: jobId, ...(Object.keys(vars).length > 0 ? { vars } : {}) }, 'manual');
          return redirect(`/ui/executions/${encodeURIComponent(execId)}`);
        } catch (err) {
          const message = err instanceof HttpError || (err instanceof EngineError && err.code !== 'not_found') ? err.message : undefined;
          if (message === undefined) throw err;
          return jobPage(req, jobId, { runError: message, vars: text }, 400);
        }
      },
    },
    {
      method: 'POST',
      pattern: /^\/ui\/jobs\/([^/]+)\/active$/,
      handler: async (req) => {
        const job = await projects.getJob(req.projectId, req.params[0]!);
        const active = req.form.get('active');
        if (active !== 'true' && active !== 'false') throw new HttpError(400, 'bad_request', 'field "active" must be true or false');
        const { executed: _executed, next_run: _next, created: _created, updated: _updated, default: _default, config, ...fields } = job;
        await projects.saveJob(req.projectId, { ...fields, active: active === 'true', config: { ...config, mode: config.mode ?? undefined } });
        return redirect(`/ui/jobs/${encodeURIComponent(job.id)}`);
      },
    },
  ];
}
