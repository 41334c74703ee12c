/**
 * Executions: the list with filters (status, job, period) and keyset paging
 * — page n is one indexed range scan like page 1, so paging stays as fast
 * over 100,000 executions as over 100 — and an execution's page with its
 * tasks or steps, their logs (live through live-events.ts) and Cancel.
 */
import { EngineError } from '../../../engine/errors.js';
import { EXECUTION_STATUSES, type ExecutionQuery, type ExecutionRecord, type ExecutionStatus } from '../../../engine/state/store.js';
import { executionView } from '../../routes/executions.js';
import { notFound } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, redirect, type UiRequest, type UiRoute } from '../ui-route.js';
import { ganttSvg } from '../charts/gantt.js';
import { trusted } from '../views.js';
import { buildStepNodes } from './build-nodes.js';
import { executionRecords } from './execution-records.js';
import { liveEvents, type LiveStreams } from './live-events.js';

export const EXECUTIONS_PAGE_SIZE = 50;
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)_([0-9A-Za-z]{1,64})$/;

/** A `datetime-local` value read as UTC → canonical RFC 3339; undefined when empty; an error names the field. */
export function utcInput(value: string, field: string): string | undefined {
  if (value === '') return undefined;
  const m = LOCAL_TIME.exec(value);
  const t = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0))) : undefined;
  if (!t || Number.isNaN(t.getTime()) || t.getUTCDate() !== Number(m![3])) throw new EngineError('bad_request', `${field} must be a date and time (YYYY-MM-DDTHH:MM[:SS], UTC), got ${JSON.stringify(value)}`);
  return t.toISOString();
}

const cursorOf = (e: ExecutionRecord) => `${e.start_time}_${e.exec_id}`;
function parseCursor(raw: string, field: string): { start_time: string; exec_id: string } | undefined {
  if (raw === '') return undefined;
  const m = CURSOR.exec(raw);
  if (!m) throw new EngineError('bad_request', `${field} is not a page position of this list: start again from the newest`);
  return { start_time: m[1]!, exec_id: m[2]! };
}

export function executionPages(deps: ConsoleDeps, live: LiveStreams): UiRoute[] {
  const { store } = deps;

  async function list(req: UiRequest) {
    // The job filter needs names only: the store's records, without the views' last-run lookup.
    const jobs = await store.listJobs(req.projectId);
    const status = req.query('status');
    const jobId = req.query('job');
    const filters = { status, job: jobId, from: req.query('from'), to: req.query('to') };
    const base = { title: 'Executions', nav: 'executions' as const, filters, statuses: EXECUTION_STATUSES.map((s) => ({ value: s, selected: s === status })), jobs: jobs.map((j) => ({ id: j.id, name: j.name, selected: j.id === jobId })) };
    let query: ExecutionQuery;
    let after: ReturnType<typeof parseCursor>;
    let before: ReturnType<typeof parseCursor>;
    try {
      if (status !== '' && !(EXECUTION_STATUSES as readonly string[]).includes(status)) throw new EngineError('bad_request', `status must be one of ${EXECUTION_STATUSES.join(', ')}`);
      const from = utcInput(filters.from, 'From');
      const to = utcInput(filters.to, 'To');
      if (from !== undefined && to !== undefined && from > to) throw new EngineError('bad_request', 'From must not be after To');
      after = parseCursor(req.query('after'), 'after');
      before = parseCursor(req.query('before'), 'before');
      query = {
        projectId: req.projectId,
        order: 'desc',
        limit: EXECUTIONS_PAGE_SIZE + 1,
        ...(status !== '' ? { status: status as ExecutionStatus } : {}),
        ...(jobId !== '' ? { jobId } : {}),
        ...(from !== undefined || to !== undefined ? { period: [from ?? '0001-01-01T00:00:00.000Z', to ?? '9999-12-31T23:59:59.999Z'] as const } : {}),
      };
    } catch (err) {
      if (err instanceof EngineError) return page('executions', { ...base, executions: [], error: err.message }, 400);
      throw err;
    }
    const keep = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''));
    const link = (k: string, v: string) => `/ui/executions?${new URLSearchParams([...keep, [k, v]]).toString()}`;
    const newest = `/ui/executions${keep.size > 0 ? `?${keep.toString()}` : ''}`;
    let rows: ExecutionRecord[];
    let older = false;
    let newer = false;
    if (before) {
      // Newer page: walk up from the cursor, then show newest first.
      const up = await store.listExecutions({ ...query, order: 'asc', after: before });
      newer = up.length > EXECUTIONS_PAGE_SIZE;
      if (!newer) return redirect(newest);
      rows = up.slice(0, EXECUTIONS_PAGE_SIZE).reverse();
      older = true;
    } else {
      const down = await store.listExecutions({ ...query, ...(after ? { after } : {}) });
      older = down.length > EXECUTIONS_PAGE_SIZE;
      rows = down.slice(0, EXECUTIONS_PAGE_SIZE);
      newer = after !== undefined;
    }
    return page('executions', {
      ...base,
      executions: rows.map(executionView),
      paged: after !== undefined || before !== undefined,
      newest,
      ...(older && rows.length > 0 ? { older: link('after', cursorOf(rows.at(-1)!)) } : {}),
      ...(newer && rows.length > 0 ? { newer: link('before', cursorOf(rows[0]!)) } : {}),
    });
  }

  /** The pipeline's `run`/`test` build steps with their nodes: a table and a Gantt chart each. */
  async function buildSteps(execId: string) {
    const steps = await store.listSteps(execId, { excludeOutput: true });
    return steps.flatMap((step) => {
      const b = buildStepNodes(step);
      if (!b) return [];
      // Built by ganttSvg, which escapes every name it writes (http/ui/charts/gantt.ts).
      return [{ ...b, nodeCount: b.rows.length, ...(b.span ? { gantt: trusted(ganttSvg(b.rows, b.span.lengthMs)) } : {}) }];
    });
  }

  async function one(req: UiRequest, execId: string) {
    const exec = await store.getExecution(req.projectId, execId);
    if (!exec) throw notFound(`execution ${execId} not found`);
    const records = await executionRecords(store, exec, true);
    return page('execution', {
      builds: exec.job_type === 'pipeline' ? await buildSteps(exec.exec_id) : [],
      title: `Execution ${exec.exec_id}`,
      nav: 'executions',
      exec: executionView(exec),
      records,
      isPipeline: exec.job_type === 'pipeline',
      active: exec.status === 'queued' || exec.status === 'running',
    });
  }

  return [
    { method: 'GET', pattern: /^\/ui\/executions$/, handler: list },
    { method: 'GET', pattern: /^\/ui\/executions\/([0-9A-Za-z]+)$/, handler: (req) => one(req, req.params[0]!) },
    { method: 'GET', pattern: /^\/ui\/executions\/([0-9A-Za-z]+)\/events$/, handler: (req) => liveEvents(deps, req, req.params[0]!, live) },
    {
      method: 'POST',
      pattern: /^\/ui\/executions\/([0-9A-Za-z]+)\/cancel$/,
      handler: async (req) => {
        const execId = req.params[0]!;
        try {
          await deps.executions.cancel(req.projectId, execId);
        } catch (err) {
          // Already ended: its page says how.
          if (!(err instanceof EngineError && err.code === 'conflict')) throw err;
        }
        return redirect(`/ui/executions/${encodeURIComponent(execId)}`);
      },
    },
  ];
}
