/**
 * What both backends share: turning stored rows into records, time
 * normalisation, status maps and the output-cap arithmetic. Rows come back
 * with backend-specific types (SQLite 0/1 and numbers, PostgreSQL booleans
 * and BIGINT strings), so the mappers coerce.
 */
import { EngineError } from '../errors.js';
import {
  EXECUTION_STATUSES,
  OUTPUT_TRUNCATED_LINE,
  type ExecutionPatch,
  type ExecutionRecord,
  type ExecutionStatus,
  type GitRecord,
  type JobRecord,
  type JsonObject,
  type NewExecution,
  type ProjectRecord,
  type StatusMap,
  type StepRecord,
  type StepUpsert,
  type TaskRecord,
  type TaskUpsert,
} from './store.js';

type Row = Record<string, unknown>;

const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `2025-03-01T02:00:00.000Z` form, so stored times sort as strings. */
export function canonicalTime(value: string, field: string): string {
  if (CANONICAL_TIME.test(value)) return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw new EngineError('internal', `${field} must be an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
  }
  return d.toISOString();
}

export const optionalTime = (value: string | null | undefined, field: string): string | null =>
  value === null || value === undefined ? null : canonicalTime(value, field);

export const nowIso = (): string => new Date().toISOString();

/** PostgreSQL text cannot hold NUL; both backends store U+FFFD instead so they agree. */
export const cleanText = (s: string): string => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s);
export const cleanNullable = (s: string | null | undefined): string | null => (s === null || s === undefined ? null : cleanText(s));

export const toJson = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));
const fromJson = <T>(v: unknown): T | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as T));
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === 't';
const str = (v: unknown): string => v as string;
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : (v as string));

export function emptyStatusMap(): Record<ExecutionStatus, number> {
  const m = {} as Record<ExecutionStatus, number>;
  for (const s of EXECUTION_STATUSES) m[s] = 0;
  return m;
}

/** Status maps per exec id from `(exec_id, status, n)` rows of one grouped query. */
export function statusMaps(rows: readonly Row[]): Map<string, StatusMap> {
  const out = new Map<string, Record<ExecutionStatus, number>>();
  for (const r of rows) {
    const id = str(r.exec_id);
    let m = out.get(id);
    if (!m) out.set(id, (m = emptyStatusMap()));
    m[r.status as ExecutionStatus] += num(r.n);
  }
  return out;
}

export function projectFromRow(r: Row): ProjectRecord {
  const git: GitRecord | null =
    r.git_url === null || r.git_url === undefined
      ? null
      : {
          url: str(r.git_url),
          branch: str(r.git_branch),
          enabled: bool(r.git_enabled),
          poll_interval: num(r.git_poll_interval),
          last_sha: strOrNull(r.git_last_sha),
          last_pull: strOrNull(r.git_last_pull),
          last_error: strOrNull(r.git_last_error),
        };
  return { id: str(r.id), name: str(r.name), git, created: str(r.created) };
}

export function jobFromRow(r: Row): JobRecord {
  return {
    id: str(r.id),
    project_id: str(r.project_id),
    name: str(r.name),
    type: r.type as JobRecord['type'],
    file_name: str(r.file_name),
    description: str(r.description),
    active: bool(r.active),
    default: bool(r.is_default),
    streams: fromJson<string[]>(r.streams) ?? [],
    tags: fromJson<string[]>(r.tags) ?? [],
    schedules: fromJson<string[]>(r.schedules) ?? [],
    timezone: str(r.timezone),
    policy: r.policy as JobRecord['policy'],
    config: fromJson<JobRecord['config']>(r.config) ?? { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    created: str(r.created),
    updated: str(r.updated),
  };
}

export function executionFromRow(r: Row, maps: Map<string, StatusMap>): ExecutionRecord {
  return executionFromValues(EXECUTION_COLUMNS.map((c) => r[c]), maps);
}

/**
 * An execution from its column values in EXECUTION_COLUMNS order: a raw row,
 * which better-sqlite3 returns in about half the time of a row object (the
 * bulk of a 100-execution page's cost).
 */
export function executionFromValues(v: readonly unknown[], maps: Map<string, StatusMap>): ExecutionRecord {
  const [execId, projectId, jobId, jobName, jobType, fileName, status, error, trigger, startTime, endTime, rowCount, byteCount, build, overrides] = v;
  const start = str(startTime);
  const end = strOrNull(endTime);
  return {
    exec_id: str(execId),
    project_id: str(projectId),
    job_id: str(jobId),
    job_name: str(jobName),
    job_type: jobType as ExecutionRecord['job_type'],
    file_name: str(fileName),
    status: status as ExecutionStatus,
    error: strOrNull(error),
    trigger: trigger as ExecutionRecord['trigger'],
    start_time: start,
    end_time: end,
    duration: end === null ? null : Math.max(0, Date.parse(end) - Date.parse(start)) / 1000,
    rows: num(rowCount),
    bytes: num(byteCount),
    status_map: maps.get(str(execId)) ?? emptyStatusMap(),
    build: fromJson<JsonObject>(build),
    overrides: fromJson<JsonObject>(overrides),
  };
}

export function taskFromRow(r: Row, output: string | undefined): TaskRecord {
  const t: TaskRecord = {
    exec_id: str(r.exec_id),
    task_id: str(r.task_id),
    seq: num(r.seq),
    stream_name: str(r.stream_name),
    object: strOrNull(r.object),
    mode: str(r.mode),
    status: r.status as ExecutionStatus,
    error: strOrNull(r.error),
    start_time: strOrNull(r.start_time),
    end_time: strOrNull(r.end_time),
    rows: num(r.row_count),
    bytes: num(r.byte_count),
    metrics: fromJson<JsonObject>(r.metrics),
  };
  return output === undefined ? t : { ...t, output };
}

export function stepFromRow(r: Row, output: string | undefined): StepRecord {
  const s: StepRecord = {
    exec_id: str(r.exec_id),
    step_id: str(r.step_id),
    seq: num(r.seq),
    type: str(r.type),
    status: r.status as ExecutionStatus,
    error: strOrNull(r.error),
    start_time: strOrNull(r.start_time),
    end_time: strOrNull(r.end_time),
    state: fromJson<JsonObject>(r.state),
  };
  return output === undefined ? s : { ...s, output };
}

/** Default task order: n of `task_<n>`. */
export const taskSeqFromId = (taskId: string): number | undefined => {
  const m = /^task_([1-9][0-9]{0,8})$/.exec(taskId);
  return m ? Number(m[1]) : undefined;
};

/**
 * The append that crosses the cap: what fits of `text` (cut at a UTF-8
 * character boundary) and then one `[output truncated]` line. `bytes` is
 * what the kept part adds to the counted size (the marker is not counted).
 */
export function truncatedAppend(used: number, cap: number, text: string, storedEndsWithNewline: boolean): { chunk: string; bytes: number } {
  const buf = Buffer.from(text, 'utf8');
  let room = Math.max(0, Math.min(buf.length, cap - used));
  while (room > 0 && room < buf.length && (buf[room]! & 0xc0) === 0x80) room--;
  const kept = buf.subarray(0, room).toString('utf8');
  const endsWithNewline = kept === '' ? storedEndsWithNewline || used === 0 : kept.endsWith('\n');
  return { chunk: `${kept}${endsWithNewline ? '' : '\n'}${OUTPUT_TRUNCATED_LINE}\n`, bytes: room };
}

/**
 * The exclusive upper bound of the strings starting with `prefix` (whose last
 * character is ASCII): `[prefix, bound)` is an index-friendly range in byte
 * order (SQLite BINARY, PostgreSQL COLLATE "C").
 */
export function prefixUpperBound(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

export function assertDigest(digest: string): void {
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new EngineError('internal', 'a token digest must be 64 lowercase hex characters');
}

export function assertCount(n: number, field: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new EngineError('internal', `${field} must be an integer >= 0, got ${n}`);
}

// ---- values for writes, shared by both backends (booleans encoded by the caller) ----

export const EXECUTION_COLUMNS = [
  'exec_id', 'project_id', 'job_id', 'job_name', 'job_type', 'file_name', 'status', 'error',
  'triggered_by', 'start_time', 'end_time', 'row_count', 'byte_count', 'build', 'overrides',
] as const;

/** Values in EXECUTION_COLUMNS order; the exec id must already be chosen. */
export function executionValues(e: NewExecution & { exec_id: string }): unknown[] {
  assertCount(e.rows ?? 0, 'rows');
  assertCount(e.bytes ?? 0, 'bytes');
  const status = e.status ?? 'queued';
  const start = canonicalTime(e.start_time, 'start_time');
  let end = optionalTime(e.end_time, 'end_time');
  if (end === null && status !== 'queued' && status !== 'running') end = start;
  return [
    e.exec_id, e.project_id, e.job_id, cleanText(e.job_name), e.job_type, e.file_name, status, cleanNullable(e.error),
    e.trigger, start, end, e.rows ?? 0, e.bytes ?? 0, toJson(e.build), toJson(e.overrides),
  ];
}

export const JOB_COLUMNS = [
  'id', 'project_id', 'name', 'type', 'file_name', 'description', 'active', 'is_default', 'streams', 'tags',
  'schedules', 'timezone', 'policy', 'config', 'created', 'updated',
] as const;

/** Values in JOB_COLUMNS order. */
export function jobValues(j: Omit<JobRecord, 'created' | 'updated'>, created: string, updated: string, encodeBool: (b: boolean) => unknown): unknown[] {
  return [
    j.id, j.project_id, cleanText(j.name), j.type, j.file_name, cleanText(j.description), encodeBool(j.active), encodeBool(j.default),
    JSON.stringify(j.streams), JSON.stringify(j.tags), JSON.stringify(j.schedules), j.timezone, j.policy, JSON.stringify(j.config),
    canonicalTime(created, 'created'), canonicalTime(updated, 'updated'),
  ];
}

/** An optional field of an upsert or patch: whether it was given, and its stored value. */
export interface Given {
  readonly has: boolean;
  readonly value: unknown;
}

const given = (o: object, key: string, encode: (v: never) => unknown = (v) => v): Given =>
  key in o && (o as Record<string, unknown>)[key] !== undefined
    ? { has: true, value: encode((o as Record<string, unknown>)[key] as never) }
    : { has: false, value: null };

export function taskUpsertValues(t: TaskUpsert) {
  if (t.rows !== undefined) assertCount(t.rows, 'rows');
  if (t.bytes !== undefined) assertCount(t.bytes, 'bytes');
  return {
    exec_id: t.exec_id,
    task_id: t.task_id,
    seq: t.seq ?? taskSeqFromId(t.task_id) ?? null,
    stream_name: cleanText(t.stream_name),
    mode: t.mode,
    status: t.status,
    object: given(t, 'object', cleanNullable),
    error: given(t, 'error', cleanNullable),
    start_time: given(t, 'start_time', (v: string | null) => optionalTime(v, 'start_time')),
    end_time: given(t, 'end_time', (v: string | null) => optionalTime(v, 'end_time')),
    rows: given(t, 'rows'),
    bytes: given(t, 'bytes'),
    metrics: given(t, 'metrics', toJson),
  };
}

export function stepUpsertValues(s: StepUpsert) {
  return {
    exec_id: s.exec_id,
    step_id: s.step_id,
    type: s.type,
    status: s.status,
    error: given(s, 'error', cleanNullable),
    start_time: given(s, 'start_time', (v: string | null) => optionalTime(v, 'start_time')),
    end_time: given(s, 'end_time', (v: string | null) => optionalTime(v, 'end_time')),
    state: given(s, 'state', toJson),
  };
}

/** A patch with a terminal status and no end_time ends now. */
export function executionPatchValues(p: ExecutionPatch, now: string) {
  if (p.rows !== undefined) assertCount(p.rows, 'rows');
  if (p.bytes !== undefined) assertCount(p.bytes, 'bytes');
  const terminal = p.status !== undefined && p.status !== 'queued' && p.status !== 'running';
  const end = given(p, 'end_time', (v: string | null) => optionalTime(v, 'end_time'));
  return {
    status: given(p, 'status'),
    error: given(p, 'error', cleanNullable),
    end_time: terminal && (!end.has || end.value === null) ? { has: true, value: now } : end,
    rows: given(p, 'rows'),
    bytes: given(p, 'bytes'),
    build: given(p, 'build', toJson),
  };
}

/** Open tasks/steps of an execution that ended take its status if cancelled or interrupted, else cancelled. */
export const closingStatus = (s: ExecutionStatus): ExecutionStatus => (s === 'cancelled' || s === 'interrupted' ? s : 'cancelled');

export const GIT_DEFAULTS = { branch: 'main', enabled: true, poll_interval: 60, last_sha: null, last_pull: null, last_error: null } as const;

/** The git settings after a patch; EngineError when git would have no url. */
export function mergeGit(current: GitRecord | null, patch: Partial<GitRecord>): GitRecord {
  const merged = { ...GIT_DEFAULTS, ...(current ?? {}), ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as GitRecord;
  if (typeof merged.url !== 'string' || merged.url === '') throw new EngineError('bad_request', 'a git url is required to configure git');
  return { ...merged, last_pull: optionalTime(merged.last_pull, 'git.last_pull') };
}

/** Git columns in order url, branch, enabled, poll_interval, last_sha, last_pull, last_error. */
export const gitValues = (g: GitRecord | null, encodeBool: (b: boolean) => unknown): unknown[] =>
  g === null ? [null, null, null, null, null, null, null] : [g.url, g.branch, encodeBool(g.enabled), g.poll_interval, g.last_sha, g.last_pull, cleanNullable(g.last_error)];

export const projectTaken = (name: string) => new EngineError('conflict', `project name ${JSON.stringify(name)} is already taken`);
export const projectNotFound = (id: string) => new EngineError('not_found', `project ${id} not found`);
export const executionNotFound = (id: string) => new EngineError('not_found', `execution ${id} not found`);
export const jobHasActive = (id: string) => new EngineError('conflict', `job ${id} has active executions`);
export const alreadyRunning = (id: string) => new EngineError('conflict', `execution ${id} cannot run: its job already has a running execution`);
export const missingRecord = (kind: 'task' | 'step', id: string, execId: string) => new EngineError('internal', `${kind} ${id} of execution ${execId} does not exist`);

export function assertTerminal(s: ExecutionStatus): void {
  if (s === 'queued' || s === 'running') throw new EngineError('internal', `finishActive needs a terminal status, got ${s}`);
}

export function assertLimit(n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new EngineError('internal', `limit must be a positive integer, got ${n}`);
}
