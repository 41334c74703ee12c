/**
 * Search across the project's jobs, files and executions from the box in
 * the console's header: a case-insensitive substring of a job's name, id or
 * file; of a file's path; of an execution's id, job name or error, or its
 * exact status. Jobs and files are matched in full; executions among the
 * newest SEARCHED_EXECUTIONS (one indexed range read, whatever the size of
 * the history), plus the execution named exactly by a full id however old.
 */
import { EngineError } from '../../../engine/errors.js';
import type { ExecutionRecord } from '../../../engine/state/store.js';
import { executionView } from '../../routes/executions.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, type UiRequest, type UiRoute } from '../ui-route.js';

/** Matches shown per kind. */
export const SEARCH_LIMIT = 50;
/** Newest executions searched by id, job name, status and error. */
export const SEARCHED_EXECUTIONS = 1000;
export const MAX_QUERY_CHARS = 200;
const EXEC_ID = /^[0-9A-Za-z]{27}$/;

export function searchPages(deps: ConsoleDeps): UiRoute[] {
  const { store, projects } = deps;

  async function executionsMatching(projectId: string, q: string, needle: string): Promise<{ rows: ExecutionRecord[]; more: boolean }> {
    const recent = await store.listExecutions({ projectId, order: 'desc', limit: SEARCHED_EXECUTIONS });
    const hits = recent.filter((e) => e.exec_id.toLowerCase().includes(needle) || e.job_name.toLowerCase().includes(needle) || e.status === needle || (e.error ?? '').toLowerCase().includes(needle));
    if (EXEC_ID.test(q) && !hits.some((e) => e.exec_id === q)) {
      const exact = await store.getExecution(projectId, q);
      if (exact) hits.unshift(exact);
    }
    return { rows: hits.slice(0, SEARCH_LIMIT), more: hits.length > SEARCH_LIMIT };
  }

  async function search(req: UiRequest) {
    const q = req.query('q').trim();
    const base = { title: q === '' ? 'Search' : `Search: ${q}`, q };
    if (q === '') return page('search', { ...base, empty: true });
    if (q.length > MAX_QUERY_CHARS) return page('search', { ...base, error: new EngineError('bad_request', `the search text is ${q.length} characters long; at most ${MAX_QUERY_CHARS} are searched`).message }, 400);
    const needle = q.toLowerCase();
    const [jobs, files, execs] = await Promise.all([projects.listJobs(req.projectId, {}), projects.listFiles(req.projectId, {}), executionsMatching(req.projectId, q, needle)]);
    const jobHits = jobs.filter((j) => j.name.toLowerCase().includes(needle) || j.id.toLowerCase().includes(needle) || j.file_name.toLowerCase().includes(needle));
    const fileHits = files.filter((f) => !f.is_dir && f.name.toLowerCase().includes(needle));
    const total = jobHits.length + fileHits.length + execs.rows.length;
    return page('search', {
      ...base,
      results: true,
      total,
      jobs: jobHits.slice(0, SEARCH_LIMIT),
      moreJobs: jobHits.length > SEARCH_LIMIT,
      files: fileHits.slice(0, SEARCH_LIMIT).map((f) => ({ name: f.name, size: f.size, updated: f.updated })),
      moreFiles: fileHits.length > SEARCH_LIMIT,
      executions: execs.rows.map(executionView),
      moreExecutions: execs.more,
      limit: SEARCH_LIMIT,
      searched: SEARCHED_EXECUTIONS,
    });
  }

  return [{ method: 'GET', pattern: /^\/ui\/search$/, handler: search }];
}
