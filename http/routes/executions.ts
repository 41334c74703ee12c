/**
 * Executions: list (and Get Execution through an
 * `exec_id` filter), cancel, and the task or step records with their logs.
 * Records are rendered without the store's internal fields (`project_id`,
 * `overrides`, `seq`). Another project's execution is indistinguishable from
 * a missing one: an empty list, or 404.
 */
import type { Context } from 'koa';
import { boolean, object, optional, string, type Infer } from 'superstruct';
import { EXECUTION_STATUSES, type ExecutionQuery, type ExecutionRecord, type ExecutionStatus, type StateStore } from '../../engine/state/store.js';
import { publicExecution, publicStep, publicTask } from '../../engine/state/public-execution.js';
import { queryParam } from '../body.js';
import { badRequest, conflict, notFound } from '../http-error.js';
import { PageCache } from '../page-cache.js';
import { route, type RequestScope, type Route } from '../route.js';

export interface ExecutionsDeps {
  readonly store: StateStore;
  /** ExecutionService.cancel: EngineError not_found/conflict with the documented messages. */
  readonly cancel: (projectId: string, execId: string) => Promise<ExecutionRecord>;
}

const STATUS_MESSAGE = `status must be one of ${EXECUTION_STATUSES.join(', ')}`;
const FILTER_KEYS = ['exec_id', 'job_id', 'status', 'period'];
const PAGE_HEAD = Buffer.from('{"executions":');
const PAGE_TAIL = Buffer.from('}');
const PERIOD_MESSAGE = 'filters.period must be two RFC 3339 timestamps in order';
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** An execution, task and step as the API shows them (the store's public shapes). */
export { publicExecution as executionView, publicStep as stepView, publicTask as taskView };

function isStatus(s: unknown): s is ExecutionStatus {
  return typeof s === 'string' && (EXECUTION_STATUSES as readonly string[]).includes(s);
}

/** An RFC 3339 timestamp (any offset) as canonical UTC with milliseconds; undefined when not one. */
export function rfc3339(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone, oh, om] = m;
  const daysIn = new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate();
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > daysIn) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59 || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) return undefined;
  // Already canonical (as toISOString writes it, the form clients send back): itself, without a second parse.
  if (frac?.length === 4 && zone === 'Z' && text[10] === 'T') return text;
  const t = new Date(text.replace(' ', 'T'));
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

interface ListQuery {
  readonly statuses: ExecutionStatus[];
  readonly limit: number;
  readonly order: 'asc' | 'desc';
  readonly execId?: string;
  readonly jobId?: string;
  readonly period?: [string, string];
}

function parseFilters(raw: string | undefined): Omit<ListQuery, 'limit' | 'order'> {
  if (raw === undefined) return { statuses: [] };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest('filters must be a URL-encoded JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('filters must be a URL-encoded JSON object');
  const f = value as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!FILTER_KEYS.includes(k)) throw badRequest(`unknown filter key ${JSON.stringify(k)}`);
  const str = (k: string): string | undefined => {
    const v = f[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw badRequest(`filters.${k} must be a string`);
    return v;
  };
  const execId = str('exec_id');
  const jobId = str('job_id');
  const status = str('status');
  if (status !== undefined && !isStatus(status)) throw badRequest(STATUS_MESSAGE);
  let period: [string, string] | undefined;
  if (f.period !== undefined && f.period !== null) {
    const p = f.period;
    if (!Array.isArray(p) || p.length !== 2) throw badRequest(PERIOD_MESSAGE);
    const [start, end] = [rfc3339(p[0]), rfc3339(p[1])];
    if (start === undefined || end === undefined || start > end) throw badRequest(PERIOD_MESSAGE);
    period = [start, end];
  }
  return {
    statuses: status !== undefined ? [status as ExecutionStatus] : [],
    ...(execId !== undefined ? { execId } : {}),
    ...(jobId !== undefined ? { jobId } : {}),
    ...(period ? { period } : {}),
  };
}

/** Query parameters, each checked with its own message. */
export function parseListQuery(ctx: Context): ListQuery {
  const status = queryParam(ctx, 'status');
  const limit = queryParam(ctx, 'limit');
  const filters = queryParam(ctx, 'filters');
  const order = queryParam(ctx, 'order');
  if (status !== undefined && !isStatus(status)) throw badRequest(STATUS_MESSAGE);
  let n = 25;
  if (limit !== undefined) {
    n = /^\d{1,3}$/.test(limit) ? Number(limit) : 0;
    if (n < 1 || n > 100) throw badRequest('limit must be an integer between 1 and 100');
  }
  const parsed = parseFilters(filters);
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
  return { ...parsed, statuses: status !== undefined ? [...parsed.statuses, status] : parsed.statuses, limit: n, order: order ?? 'desc' };
}

const ExecIdBody = { exec_id: string(), exclude_output: optional(boolean()) };
const CancelBody = object({ exec_id: string() });
const TasksBody = object({ ...ExecIdBody, status: optional(string()), stream: optional(string()) });
const StepsBody = object({ ...ExecIdBody, step_id: optional(string()) });

async function requireExecution(store: StateStore, projectId: string, execId: string): Promise<ExecutionRecord> {
  const exec = await store.getExecution(projectId, execId);
  if (!exec) throw notFound(`execution ${execId} not found`);
  return exec;
}

/** `GET /execution/list` (also Get Execution, with `filters={"exec_id":…}`). */
function listExecutions(store: StateStore, pages: PageCache) {
  return async ({ ctx, projectId }: RequestScope) => {
    const q = parseListQuery(ctx);
    // The status parameter and filters.status combine with AND: two different ones match nothing.
    if (new Set(q.statuses).size > 1) return { executions: [] };
    const query: ExecutionQuery = {
      projectId,
      order: q.order,
      limit: q.limit,
      ...(q.statuses[0] !== undefined ? { status: q.statuses[0] } : {}),
      ...(q.execId !== undefined ? { execId: q.execId } : {}),
      ...(q.jobId !== undefined ? { jobId: q.jobId } : {}),
      ...(q.period ? { period: q.period } : {}),
    };
    // A page is a pure function of the stored state and the query (duration comes from stored
    // times, never from the clock), so its bytes are reused while the store's change token holds.
    // The token is read before the query: a page can be newer than its token, never older.
    const token = store.changeToken();
    const key = JSON.stringify(query);
    const cached = pages.get(token, key);
    if (cached) return cached;
    // The page's JSON comes from the store as bytes (built by SQLite, off this thread when it can).
    return pages.put(token, key, Buffer.concat([PAGE_HEAD, await store.listExecutionsJson(query), PAGE_TAIL]));
  };
}

/** `POST /execution/cancel`. */
function cancelExecution(cancel: ExecutionsDeps['cancel']) {
  return async ({ projectId }: RequestScope, body: Infer<typeof CancelBody>) => {
    const exec = await cancel(projectId, body.exec_id);
    // It ended on its own between the check and the cancel.
    if (exec.status !== 'cancelled') throw conflict(`execution ${exec.exec_id} is not running or queued (status: ${exec.status})`);
    return { exec_id: exec.exec_id, status: exec.status };
  };
}

/** `POST /execution/replication-tasks`: task records of a replication, monitor or query execution. */
function replicationTasks(store: StateStore) {
  return async ({ projectId }: RequestScope, body: Infer<typeof TasksBody>) => {
    const exec = await requireExecution(store, projectId, body.exec_id);
    if (exec.job_type === 'pipeline') throw badRequest(`execution ${exec.exec_id} is a pipeline execution; use /execution/pipeline-steps`);
    if (body.status !== undefined && !isStatus(body.status)) throw badRequest(STATUS_MESSAGE);
    const tasks = await store.listTasks(exec.exec_id, {
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.stream !== undefined ? { stream: body.stream } : {}),
      excludeOutput: body.exclude_output === true,
    });
    return { tasks: tasks.map(publicTask) };
  };
}

/** `POST /execution/pipeline-steps`: step records of a pipeline execution. */
function pipelineSteps(store: StateStore) {
  return async ({ projectId }: RequestScope, body: Infer<typeof StepsBody>) => {
    const exec = await requireExecution(store, projectId, body.exec_id);
    if (exec.job_type !== 'pipeline') throw badRequest(`execution ${exec.exec_id} is not a pipeline execution; use /execution/replication-tasks`);
    const steps = await store.listSteps(exec.exec_id, {
      ...(body.step_id !== undefined ? { stepIdPrefix: body.step_id } : {}),
      excludeOutput: body.exclude_output === true,
    });
    return { steps: steps.map(publicStep) };
  };
}

export function executionRoutes(deps: ExecutionsDeps): Route[] {
  const { store } = deps;
  return [
    route({
      method: 'GET',
      path: '/execution/list',
      summary: 'List executions, newest first; with filters={"exec_id":…} it is Get Execution',
      auth: true,
      query: [
        { name: 'status', description: 'one of the eight execution statuses' },
        { name: 'limit', description: 'integer 1–100, default 25' },
        { name: 'filters', description: 'URL-encoded JSON object: exec_id, job_id, status, period [start, end]' },
        { name: 'order', description: 'asc or desc (default) by start_time, ties by exec_id' },
      ],
      handler: listExecutions(store, new PageCache()),
    }),
    route({ method: 'POST', path: '/execution/cancel', summary: 'Cancel a queued or running execution', auth: true, body: CancelBody, handler: cancelExecution(deps.cancel) }),
    route({ method: 'POST', path: '/execution/replication-tasks', summary: 'Task records and logs of a replication, monitor or query execution', auth: true, body: TasksBody, handler: replicationTasks(store) }),
    route({ method: 'POST', path: '/execution/pipeline-steps', summary: 'Step records and logs of a pipeline execution', auth: true, body: StepsBody, handler: pipelineSteps(store) }),
  ];
}
