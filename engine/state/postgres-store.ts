/**
 * The PostgreSQL StateStore backend, for several daemons sharing one state
 * (possibly on several machines). Same schema and semantics as the SQLite
 * backend; what differs is concurrency:
 *
 * - Multi-statement changes run in a transaction on one pooled client, or as
 *   one statement with data-modifying CTEs where that fits (updateExecution,
 *   the output append), which is also one round trip.
 * - claimNextQueued picks the oldest queued execution with
 *   `FOR UPDATE OF e SKIP LOCKED`, so daemons claiming at the same moment take
 *   different rows without waiting. Two daemons may still pick two queued
 *   executions of the same job; the partial unique index on running
 *   executions per job rejects the second, which then retries and sees the
 *   job running.
 * - An output append is one guarded UPDATE … RETURNING feeding an INSERT of
 *   the chunk; concurrent appends to one record serialise on its row lock.
 *   That statement also turns synchronous_commit off for its own transaction:
 *   on the dev machine a durable commit waits ≈3.9 ms for the WAL flush
 *   against ≈0.2 ms without. A PostgreSQL crash can then lose the last
 *   fraction of a second of log lines (never a status: those commits stay
 *   durable), which restart recovery reports as an interrupted execution.
 */
import type pg from 'pg';
import { Pool } from '../targets/postgres/pg-module.js';
import { inTransaction } from './pg-transaction.js';
import { PgPinger } from './pg-ping.js';
import { guardPool } from '../targets/postgres/pg-guard.js';
import { timingSafeEqual } from 'node:crypto';
import { EngineError } from '../errors.js';
import { newExecId, newJobId, newProjectId } from './ids.js';
import { migratePostgres } from './migrations.js';
import * as R from './records.js';
import { PROJECT_ACTIVE_SQL, projectDeleteStatements, projectHasActive, TOKEN_LIST_SQL, tokenFromRow } from './project-records.js';
import { publicExecutionsJson } from './public-execution.js';
import {
  DEFAULT_OUTPUT_CAP_BYTES,
  type ClaimOptions,
  type ExecutionPatch,
  type ExecutionQuery,
  type ExecutionRecord,
  type ExecutionStatus,
  type GitRecord,
  type JobRecord,
  type JobType,
  type NewExecution,
  type NewJob,
  type ProjectCounts,
  type ProjectRecord,
  type StateStore,
  type StateStoreOptions,
  type StepRecord,
  type StepUpsert,
  type TaskRecord,
  type TaskUpsert,
  type TokenInfo,
  type Watermark,
} from './store.js';

type Row = Record<string, unknown>;
type Queryable = pg.Pool | pg.PoolClient;

const b = (v: boolean): boolean => v;
const ACTIVE = "('queued', 'running')";
const GIT_COLUMNS = ['git_url', 'git_branch', 'git_enabled', 'git_poll_interval', 'git_last_sha', 'git_last_pull', 'git_last_error'];
const TASK_COLUMNS = 'exec_id, task_id, seq, stream_name, object, mode, status, error, start_time, end_time, row_count, byte_count, metrics';
const STEP_COLUMNS = 'exec_id, step_id, seq, type, status, error, start_time, end_time, state';
const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(', ');
const INSERT_EXECUTION = `INSERT INTO executions (${R.EXECUTION_COLUMNS.join(', ')}) VALUES (${placeholders(R.EXECUTION_COLUMNS.length)})`;

/**
 * An execution row with the cluster fields: which daemon claimed it and the
 * project-files version it ran on (present once claimed; absent before, so a
 * queued record reads as it always did).
 */
function execFromRow(r: Row, maps: Map<string, import('./store.js').StatusMap>): ExecutionRecord {
  const e = R.executionFromRow(r, maps);
  if (r.claimed_by === null || r.claimed_by === undefined) return e;
  return { ...e, daemon: String(r.claimed_by), ...(r.tree_version !== null && r.tree_version !== undefined ? { tree_version: Number(r.tree_version) } : {}) };
}

const pgCode = (err: unknown): string | undefined => (err as { code?: string } | null)?.code;
const pgConstraint = (err: unknown): string | undefined => (err as { constraint?: string } | null)?.constraint;

/** `<col> = CASE WHEN $<has> THEN $<value> ELSE <table>.<col> END`, parameters appended to `params`. */
function keep(col: string, table: string, g: R.Given, params: unknown[], cast = ''): string {
  params.push(g.has, g.value);
  return `${col} = CASE WHEN $${params.length - 1}::boolean THEN $${params.length}${cast} ELSE ${table}.${col} END`;
}

/** A record's whole output from its chunks, in the same statement (one snapshot). */
const outputOf = (kind: 'task' | 'step') =>
  `(SELECT string_agg(o.chunk, '' ORDER BY o.n) FROM ${kind}_output o WHERE o.exec_id = t.exec_id AND o.${kind}_id = t.${kind}_id) AS output`;

class PostgresStore implements StateStore {
  readonly kind = 'postgres' as const;
  private readonly cap: number;

  private readonly pinger: PgPinger;

  constructor(private readonly pool: pg.Pool, options: StateStoreOptions, url: string) {
    this.cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
    this.pinger = new PgPinger(url);
  }

  private async all(sql: string, params: unknown[] = [], on: Queryable = this.pool): Promise<Row[]> {
    return (await on.query(sql, params)).rows as Row[];
  }

  private async one(sql: string, params: unknown[] = [], on: Queryable = this.pool): Promise<Row | undefined> {
    return (await this.all(sql, params, on))[0];
  }

  private tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }

  // ---- projects ----

  async createProject(input: { name: string; git?: GitRecord | null; id?: string; created?: string }): Promise<ProjectRecord> {
    const git = input.git ? R.mergeGit(null, input.git) : null;
    const values = [input.id ?? newProjectId(), input.name, ...R.gitValues(git, b), R.canonicalTime(input.created ?? R.nowIso(), 'created')];
    try {
      const row = await this.one(`INSERT INTO projects (id, name, ${GIT_COLUMNS.join(', ')}, created) VALUES (${placeholders(10)}) RETURNING *`, values);
      return R.projectFromRow(row!);
    } catch (err) {
      if (pgCode(err) === '23505') throw R.projectTaken(input.name);
      throw err;
    }
  }

  async updateProjectGit(projectId: string, patch: Partial<GitRecord> | null): Promise<ProjectRecord | undefined> {
    return this.tx(async (c) => {
      const current = await this.one('SELECT * FROM projects WHERE id = $1 FOR UPDATE', [projectId], c);
      if (!current) return undefined;
      const git = patch === null ? null : R.mergeGit(R.projectFromRow(current).git, patch);
      const sets = GIT_COLUMNS.map((col, i) => `${col} = $${i + 1}`).join(', ');
      return R.projectFromRow((await this.one(`UPDATE projects SET ${sets} WHERE id = $8 RETURNING *`, [...R.gitValues(git, b), projectId], c))!);
    });
  }

  async getProject(projectId: string): Promise<ProjectRecord | undefined> {
    const row = await this.one('SELECT * FROM projects WHERE id = $1', [projectId]);
    return row && R.projectFromRow(row);
  }

  async getProjectByName(name: string): Promise<ProjectRecord | undefined> {
    const row = await this.one('SELECT * FROM projects WHERE name = $1', [name]);
    return row && R.projectFromRow(row);
  }

  async listProjects(): Promise<ProjectRecord[]> {
    return (await this.all('SELECT * FROM projects ORDER BY name')).map(R.projectFromRow);
  }

  async projectCounts(projectId: string): Promise<ProjectCounts> {
    const r = (await this.one('SELECT (SELECT COUNT(*) FROM jobs WHERE project_id = $1) AS jobs, (SELECT COUNT(*) FROM executions WHERE project_id = $1) AS executions', [projectId]))!;
    return { jobs: Number(r.jobs), executions: Number(r.executions) };
  }

  // ---- tokens ----

  async addToken(projectId: string, digest: string, label = '', created?: string): Promise<void> {
    R.assertDigest(digest);
    try {
      await this.pool.query('INSERT INTO tokens (digest, project_id, label, created) VALUES ($1, $2, $3, $4)', [digest, projectId, R.cleanText(label), R.canonicalTime(created ?? R.nowIso(), 'created')]);
    } catch (err) {
      if (pgCode(err) === '23503') throw R.projectNotFound(projectId);
      throw err;
    }
  }

  async projectIdForToken(digest: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{64}$/.test(digest)) return undefined;
    const row = await this.one('SELECT digest, project_id FROM tokens WHERE digest = $1', [digest]);
    if (!row) return undefined;
    return timingSafeEqual(Buffer.from(String(row.digest), 'hex'), Buffer.from(digest, 'hex')) ? String(row.project_id) : undefined;
  }

  async listTokens(): Promise<TokenInfo[]> {
    return (await this.all(TOKEN_LIST_SQL)).map(tokenFromRow);
  }

  async revokeToken(digest: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM tokens WHERE digest = $1', [digest])).rowCount ?? 0) > 0;
  }

  async deleteProject(projectId: string): Promise<boolean> {
    return this.tx(async (c) => {
      // FOR UPDATE conflicts with the key-share lock every insert referencing the project takes: none slips in meanwhile.
      if (!(await this.one('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId], c))) return false;
      const active = Number((await this.one(PROJECT_ACTIVE_SQL, [projectId], c))!.n);
      if (active > 0) throw projectHasActive(projectId, active);
      for (const sql of projectDeleteStatements('postgres')) await c.query(sql, [projectId]);
      return true;
    });
  }

  // ---- jobs ----

  async createJob(job: NewJob): Promise<JobRecord> {
    const created = job.created ?? R.nowIso();
    const values = R.jobValues({ ...job, id: job.id ?? newJobId() }, created, job.updated ?? created, b);
    try {
      return R.jobFromRow((await this.one(`INSERT INTO jobs (${R.JOB_COLUMNS.join(', ')}) VALUES (${placeholders(values.length)}) RETURNING *`, values))!);
    } catch (err) {
      if (pgCode(err) === '23503') throw R.projectNotFound(job.project_id);
      throw err;
    }
  }

  async replaceJob(job: Omit<JobRecord, 'created' | 'updated'> & { updated?: string }): Promise<JobRecord | undefined> {
    const updated = job.updated ?? R.nowIso();
    const values = R.jobValues(job, updated, updated, b);
    const cols = [...R.JOB_COLUMNS.slice(2, -2), 'updated'];
    const sets = cols.map((c, i) => `${c} = $${i + 1}`).join(', ');
    const params = [...values.slice(2, -2), values[values.length - 1], job.project_id, job.id];
    const row = await this.one(`UPDATE jobs SET ${sets} WHERE project_id = $${cols.length + 1} AND id = $${cols.length + 2} RETURNING *`, params);
    return row && R.jobFromRow(row);
  }

  async deleteJob(projectId: string, jobId: string): Promise<boolean> {
    return this.tx(async (c) => {
      if (!(await this.one('SELECT 1 FROM jobs WHERE project_id = $1 AND id = $2 FOR UPDATE', [projectId, jobId], c))) return false;
      if (await this.one(`SELECT 1 FROM executions WHERE status IN ${ACTIVE} AND job_id = $1`, [jobId], c)) throw R.jobHasActive(jobId);
      return ((await c.query('DELETE FROM jobs WHERE project_id = $1 AND id = $2', [projectId, jobId])).rowCount ?? 0) > 0;
    });
  }

  async getJob(projectId: string, jobId: string): Promise<JobRecord | undefined> {
    const row = await this.one('SELECT * FROM jobs WHERE project_id = $1 AND id = $2', [projectId, jobId]);
    return row && R.jobFromRow(row);
  }

  async listJobs(projectId: string, filter: { name?: string; file_name?: string; type?: JobType } = {}): Promise<JobRecord[]> {
    const where = ['project_id = $1'];
    const params: unknown[] = [projectId];
    for (const k of ['name', 'file_name', 'type'] as const) {
      if (filter[k] === undefined) continue;
      params.push(filter[k]);
      where.push(`${k} = $${params.length}`);
    }
    return (await this.all(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created, id`, params)).map(R.jobFromRow);
  }

  async jobsByFile(projectId: string, path: string): Promise<JobRecord[]> {
    const p = path.replace(/\/+$/, '');
    const sql = 'SELECT * FROM jobs WHERE project_id = $1 AND (file_name = $2 OR (file_name >= $3 AND file_name < $4)) ORDER BY created, id';
    return (await this.all(sql, [projectId, p, `${p}/`, R.prefixUpperBound(`${p}/`)])).map(R.jobFromRow);
  }

  async latestStartTime(jobId: string): Promise<string | null> {
    return ((await this.one('SELECT MAX(start_time) AS t FROM executions WHERE job_id = $1', [jobId]))?.t as string | null) ?? null;
  }

  async latestStartTimes(jobIds: readonly string[]): Promise<Map<string, string>> {
    const sql = 'SELECT j AS job_id, (SELECT MAX(start_time) FROM executions WHERE job_id = j) AS t FROM unnest($1::text[]) AS j';
    const rows = await this.all(sql, [jobIds]);
    return new Map(rows.filter((r) => r.t !== null).map((r) => [String(r.job_id), String(r.t)]));
  }

  // ---- executions ----

  private async withMaps(rows: Row[], on: Queryable = this.pool): Promise<ExecutionRecord[]> {
    if (rows.length === 0) return [];
    // One grouped query for the whole page; an execution has either tasks or steps.
    const counts = await this.all(
      `SELECT exec_id, status, COUNT(*) AS n FROM tasks WHERE exec_id = ANY($1::text[]) GROUP BY exec_id, status
       UNION ALL
       SELECT exec_id, status, COUNT(*) AS n FROM steps WHERE exec_id = ANY($1::text[]) GROUP BY exec_id, status`,
      [rows.map((r) => r.exec_id)],
      on,
    );
    const maps = R.statusMaps(counts);
    return rows.map((r) => execFromRow(r, maps));
  }

  async createExecution(input: NewExecution, options: { readonly scheduleDue?: string } = {}): Promise<ExecutionRecord> {
    const values = R.executionValues({ ...input, exec_id: input.exec_id ?? newExecId() });
    const n = values.length;
    // One statement: the execution and its schedule claim's record commit together.
    const sql =
      options.scheduleDue === undefined
        ? `${INSERT_EXECUTION} RETURNING *`
        : `WITH e AS (${INSERT_EXECUTION} RETURNING *),
             c AS (UPDATE schedule_claims SET exec_id = (SELECT exec_id FROM e) WHERE job_id = $${n + 1} AND due_time = $${n + 2})
           SELECT * FROM e`;
    const params = options.scheduleDue === undefined ? values : [...values, input.job_id, options.scheduleDue];
    try {
      return execFromRow((await this.one(sql, params))!, new Map());
    } catch (err) {
      if (pgCode(err) === '23503') throw R.projectNotFound(input.project_id);
      if (pgConstraint(err) === 'executions_one_running_per_job') throw R.alreadyRunning(String(values[0]));
      throw err;
    }
  }

  async insertExecutionsBulk(inputs: readonly NewExecution[]): Promise<void> {
    // One INSERT … SELECT FROM unnest(<one array per column>) per 5000 rows:
    // a handful of round trips for 100,000 rows instead of one per row.
    const cols = R.EXECUTION_COLUMNS;
    const types = cols.map((c) => (c === 'row_count' || c === 'byte_count' ? 'bigint[]' : 'text[]'));
    const sql = `INSERT INTO executions (${cols.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}`).join(', ')})`;
    await this.tx(async (c) => {
      for (let i = 0; i < inputs.length; i += 5000) {
        const arrays: unknown[][] = cols.map(() => []);
        for (const e of inputs.slice(i, i + 5000)) {
          R.executionValues({ ...e, exec_id: e.exec_id ?? newExecId() }).forEach((v, k) => arrays[k]!.push(v));
        }
        await c.query(sql, arrays);
      }
    });
  }

  async getExecution(projectId: string, execId: string): Promise<ExecutionRecord | undefined> {
    return (await this.withMaps(await this.all('SELECT * FROM executions WHERE exec_id = $1 AND project_id = $2', [execId, projectId])))[0];
  }

  async findExecution(execId: string): Promise<ExecutionRecord | undefined> {
    return (await this.withMaps(await this.all('SELECT * FROM executions WHERE exec_id = $1', [execId])))[0];
  }

  /** Several daemons may share the database and nothing here learns of their commits cheaply: never reusable. */
  changeToken(): undefined {
    return undefined;
  }

  async listExecutionsJson(q: ExecutionQuery): Promise<Buffer> {
    return publicExecutionsJson(await this.listExecutions(q));
  }

  async listExecutions(q: ExecutionQuery): Promise<ExecutionRecord[]> {
    R.assertLimit(q.limit);
    const params: unknown[] = [q.projectId];
    const where = ['project_id = $1'];
    const add = (cond: (n: number) => string, v: unknown) => (params.push(v), where.push(cond(params.length)));
    if (q.execId !== undefined) add((n) => `exec_id = $${n}`, q.execId);
    if (q.jobId !== undefined) add((n) => `job_id = $${n}`, q.jobId);
    if (q.status !== undefined) {
      const list = typeof q.status === 'string' ? [q.status] : q.status;
      if (list.length === 0) return [];
      if (list.length === 1) add((n) => `status = $${n}`, list[0]);
      else add((n) => `status = ANY($${n}::text[])`, list);
    }
    if (q.period) {
      add((n) => `start_time >= $${n}`, R.canonicalTime(q.period[0], 'period start'));
      add((n) => `start_time < $${n}`, R.canonicalTime(q.period[1], 'period end'));
    }
    if (q.after) {
      const time = R.canonicalTime(q.after.start_time, 'after start_time');
      params.push(time, q.after.exec_id);
      where.push(`(start_time, exec_id) ${q.order === 'asc' ? '>' : '<'} ($${params.length - 1}, $${params.length})`);
    }
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    params.push(q.limit);
    const sql = `SELECT * FROM executions WHERE ${where.join(' AND ')} ORDER BY start_time ${dir}, exec_id ${dir} LIMIT $${params.length}`;
    return this.withMaps(await this.all(sql, params));
  }

  async updateExecution(execId: string, patch: ExecutionPatch): Promise<boolean> {
    const v = R.executionPatchValues(patch, R.nowIso());
    const params: unknown[] = [execId];
    const sets = [
      keep('status', 'executions', v.status, params, '::text'),
      keep('error', 'executions', v.error, params, '::text'),
      keep('end_time', 'executions', v.end_time, params, '::text'),
      keep('row_count', 'executions', v.rows, params, '::bigint'),
      keep('byte_count', 'executions', v.bytes, params, '::bigint'),
      keep('build', 'executions', v.build, params, '::text'),
    ];
    // The execution and, when it just ended, its open tasks and steps: one atomic statement.
    const close = (table: string) => `UPDATE ${table} SET
        status = CASE WHEN e.status IN ('cancelled', 'interrupted') THEN e.status ELSE 'cancelled' END,
        end_time = COALESCE(${table}.end_time, e.end_time)
      FROM e WHERE ${table}.exec_id = $1 AND ${table}.status IN ${ACTIVE} AND e.status NOT IN ${ACTIVE}`;
    const sql = `WITH e AS (UPDATE executions SET ${sets.join(', ')} WHERE exec_id = $1 AND status IN ${ACTIVE} RETURNING status, end_time),
      t AS (${close('tasks')}), s AS (${close('steps')})
      SELECT status FROM e`;
    try {
      return (await this.all(sql, params)).length > 0;
    } catch (err) {
      if (pgConstraint(err) === 'executions_one_running_per_job') throw R.alreadyRunning(execId);
      throw err;
    }
  }

  private async closeOpen(c: Queryable, execIds: string[], status: ExecutionStatus, now: string): Promise<number> {
    let n = 0;
    for (const table of ['tasks', 'steps']) {
      const r = await c.query(`UPDATE ${table} SET status = $1, end_time = COALESCE(end_time, $2) WHERE exec_id = ANY($3::text[]) AND status IN ${ACTIVE}`, [status, now, execIds]);
      n += r.rowCount ?? 0;
    }
    return n;
  }

  async activeExecutions(jobId: string): Promise<ExecutionRecord[]> {
    return this.withMaps(await this.all(`SELECT * FROM executions WHERE status IN ${ACTIVE} AND job_id = $1 ORDER BY exec_id`, [jobId]));
  }

  async claimNextQueued(options: ClaimOptions = {}): Promise<ExecutionRecord | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        const row = await this.tx(async (c) => {
          if (options.maxRunning !== undefined) {
            // Serialise one owner's claims so two concurrent calls cannot both take the last slot.
            await c.query('SELECT pg_advisory_xact_lock(7350211, hashtext($1))', [options.owner ?? '']);
            const running = options.owner === undefined
              ? await this.one("SELECT COUNT(*) AS n FROM executions WHERE status = 'running'", [], c)
              : await this.one("SELECT COUNT(*) AS n FROM executions WHERE status = 'running' AND claimed_by = $1", [options.owner], c);
            if (Number(running!.n) >= options.maxRunning) return undefined;
          }
          const next = await this.one(
            `SELECT e.exec_id FROM executions e WHERE e.status = 'queued'
               AND NOT EXISTS (SELECT 1 FROM executions r WHERE r.job_id = e.job_id AND r.status = 'running')
             ORDER BY e.exec_id LIMIT 1 FOR UPDATE OF e SKIP LOCKED`,
            [],
            c,
          );
          if (!next) return undefined;
          return this.one("UPDATE executions SET status = 'running', claimed_by = $2, attempt = attempt + 1 WHERE exec_id = $1 RETURNING *", [next.exec_id, options.owner ?? null], c);
        });
        return row && (await this.withMaps([row]))[0];
      } catch (err) {
        // Another daemon started this job between our check and update: look again.
        if (pgConstraint(err) === 'executions_one_running_per_job' && attempt < 5) continue;
        throw err;
      }
    }
  }

  async markRunningInterrupted(now: string, error: string, owner?: string): Promise<string[]> {
    const at = R.canonicalTime(now, 'now');
    return this.tx(async (c) => {
      const rows = owner === undefined
        ? await this.all("SELECT exec_id FROM executions WHERE status = 'running' ORDER BY exec_id FOR UPDATE", [], c)
        : await this.all("SELECT exec_id FROM executions WHERE status = 'running' AND claimed_by = $1 ORDER BY exec_id FOR UPDATE", [owner], c);
      const ids = rows.map((r) => String(r.exec_id));
      if (ids.length === 0) return ids;
      await c.query("UPDATE executions SET status = 'interrupted', error = $1, end_time = $2 WHERE exec_id = ANY($3::text[])", [R.cleanText(error), at, ids]);
      await this.closeOpen(c, ids, 'interrupted', at);
      return ids;
    });
  }

  async finishActive(execId: string, status: ExecutionStatus, now: string): Promise<number> {
    R.assertTerminal(status);
    return this.tx((c) => this.closeOpen(c, [execId], status, R.canonicalTime(now, 'now')));
  }

  // ---- tasks and steps ----

  private async upsertTaskOn(on: Queryable, t: TaskUpsert): Promise<boolean> {
    const v = R.taskUpsertValues(t);
    const params: unknown[] = [v.exec_id, v.task_id, v.seq, v.stream_name, v.mode, v.status];
    const sets = [
      keep('object', 'tasks', v.object, params, '::text'),
      keep('error', 'tasks', v.error, params, '::text'),
      keep('start_time', 'tasks', v.start_time, params, '::text'),
      keep('end_time', 'tasks', v.end_time, params, '::text'),
      keep('row_count', 'tasks', v.rows, params, '::bigint'),
      keep('byte_count', 'tasks', v.bytes, params, '::bigint'),
      keep('metrics', 'tasks', v.metrics, params, '::text'),
    ];
    // The INSERT reuses the value parameters ($8, $10, …); COALESCE gives counters their default.
    const sql = `INSERT INTO tasks (${TASK_COLUMNS}) VALUES ($1, $2,
        COALESCE($3::integer, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks WHERE exec_id = $1)),
        $4, $8::text, $5, $6, $10::text, $12::text, $14::text, COALESCE($16::bigint, 0), COALESCE($18::bigint, 0), $20::text)
      ON CONFLICT (exec_id, task_id) DO UPDATE SET stream_name = EXCLUDED.stream_name, mode = EXCLUDED.mode, status = EXCLUDED.status,
        ${sets.join(', ')}
      WHERE tasks.status IN ${ACTIVE}`;
    try {
      return ((await on.query(sql, params)).rowCount ?? 0) > 0;
    } catch (err) {
      if (pgCode(err) === '23503') throw R.executionNotFound(t.exec_id);
      throw err;
    }
  }

  async upsertTask(t: TaskUpsert): Promise<boolean> {
    return this.upsertTaskOn(this.pool, t);
  }

  async upsertTasks(tasks: readonly TaskUpsert[]): Promise<void> {
    await this.tx(async (c) => {
      for (const t of tasks) await this.upsertTaskOn(c, t);
    });
  }

  async upsertStep(s: StepUpsert): Promise<boolean> {
    const v = R.stepUpsertValues(s);
    const params: unknown[] = [v.exec_id, v.step_id, v.type, v.status];
    const sets = [
      keep('error', 'steps', v.error, params, '::text'),
      keep('start_time', 'steps', v.start_time, params, '::text'),
      keep('end_time', 'steps', v.end_time, params, '::text'),
      keep('state', 'steps', v.state, params, '::text'),
    ];
    const sql = `INSERT INTO steps (${STEP_COLUMNS}) VALUES ($1, $2,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps WHERE exec_id = $1), $3, $4, $6::text, $8::text, $10::text, $12::text)
      ON CONFLICT (exec_id, step_id) DO UPDATE SET type = EXCLUDED.type, status = EXCLUDED.status, ${sets.join(', ')}
      WHERE steps.status IN ${ACTIVE}`;
    try {
      return ((await this.pool.query(sql, params)).rowCount ?? 0) > 0;
    } catch (err) {
      if (pgCode(err) === '23503') throw R.executionNotFound(s.exec_id);
      throw err;
    }
  }

  private async append(kind: 'task' | 'step', execId: string, id: string, raw: string): Promise<void> {
    if (raw === '') return;
    const text = R.cleanText(raw);
    const size = Buffer.byteLength(text, 'utf8');
    const [table, out, col] = kind === 'task' ? ['tasks', 'task_output', 'task_id'] : ['steps', 'step_output', 'step_id'];
    const fast = await this.one(
      `WITH upd AS (
         UPDATE ${table} SET output_bytes = output_bytes + $4, output_chunks = output_chunks + 1
         WHERE exec_id = $1 AND ${col} = $2 AND NOT output_truncated AND output_bytes + $4 <= $5
         RETURNING output_chunks
       ), ins AS (INSERT INTO ${out} (exec_id, ${col}, n, chunk) SELECT $1, $2, output_chunks, $3 FROM upd)
       SELECT COUNT(*) AS written, set_config('synchronous_commit', 'off', true) AS async_commit FROM upd`,
      [execId, id, text, size, this.cap],
    );
    if (Number(fast!.written) > 0) return;
    // Crossing the cap (once per record), or already truncated.
    await this.tx(async (c) => {
      const cur = await this.one(`SELECT output_bytes, output_chunks, output_truncated FROM ${table} WHERE exec_id = $1 AND ${col} = $2 FOR UPDATE`, [execId, id], c);
      if (!cur) throw R.missingRecord(kind, id, execId);
      if (cur.output_truncated) return;
      const n = Number(cur.output_chunks);
      const last = n === 0 ? undefined : await this.one(`SELECT chunk FROM ${out} WHERE exec_id = $1 AND ${col} = $2 AND n = $3`, [execId, id, n], c);
      const cut = R.truncatedAppend(Number(cur.output_bytes), this.cap, text, String(last?.chunk ?? '').endsWith('\n'));
      await c.query(`UPDATE ${table} SET output_bytes = output_bytes + $3, output_chunks = $4, output_truncated = true WHERE exec_id = $1 AND ${col} = $2`, [execId, id, cut.bytes, n + 1]);
      await c.query(`INSERT INTO ${out} (exec_id, ${col}, n, chunk) VALUES ($1, $2, $3, $4)`, [execId, id, n + 1, cut.chunk]);
    });
  }

  async appendTaskOutput(execId: string, taskId: string, text: string): Promise<void> {
    await this.append('task', execId, taskId, text);
  }

  async appendStepOutput(execId: string, stepId: string, text: string): Promise<void> {
    await this.append('step', execId, stepId, text);
  }

  async listTasks(execId: string, filter: { status?: ExecutionStatus; stream?: string; excludeOutput?: boolean } = {}): Promise<TaskRecord[]> {
    const params: unknown[] = [execId];
    const where = ['exec_id = $1'];
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    if (filter.stream !== undefined) {
      params.push(filter.stream);
      where.push(`stream_name = $${params.length}`);
    }
    const output = filter.excludeOutput ? '' : `, ${outputOf('task')}`;
    const rows = await this.all(`SELECT ${TASK_COLUMNS}${output} FROM tasks t WHERE ${where.join(' AND ')} ORDER BY seq, task_id`, params);
    return rows.map((r) => R.taskFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  async listSteps(execId: string, filter: { stepIdPrefix?: string; excludeOutput?: boolean } = {}): Promise<StepRecord[]> {
    const output = filter.excludeOutput ? '' : `, ${outputOf('step')}`;
    let sql = `SELECT ${STEP_COLUMNS}${output} FROM steps t WHERE exec_id = $1`;
    const params: unknown[] = [execId];
    const p = filter.stepIdPrefix;
    if (p !== undefined && p !== '') {
      sql += ' AND (step_id = $2 OR (step_id >= $3 AND step_id < $4) OR (step_id >= $5 AND step_id < $6))';
      params.push(p, `${p}.`, R.prefixUpperBound(`${p}.`), `${p}[`, R.prefixUpperBound(`${p}[`));
    }
    const rows = await this.all(`${sql} ORDER BY seq, step_id`, params);
    return rows.map((r) => R.stepFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  // ---- build watermarks ----

  async getWatermark(target: string, model: string): Promise<Watermark | undefined> {
    const row = await this.one('SELECT value, updated_at FROM service_build_watermarks WHERE target = $1 AND model = $2', [target, model]);
    return row && { value: String(row.value), updatedAt: String(row.updated_at) };
  }

  async setWatermark(target: string, model: string, value: string, now?: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO service_build_watermarks (target, model, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (target, model) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [target, model, value, R.canonicalTime(now ?? R.nowIso(), 'now')],
    );
  }

  private closed = false;

  ping(timeoutMs: number): Promise<number> {
    return this.pinger.ping(timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pinger.close();
    await this.pool.end();
  }
}

/** Connects, migrates and returns a PostgreSQL state store for a `postgres://` / `postgresql://` URL. */
export async function openPostgresStore(url: string, options: StateStoreOptions = {}): Promise<StateStore> {
  // A daemon's sessions carry its id: the fence trigger refuses their writes once it was taken over.
  const daemon = options.daemonId === undefined ? {} : { options: `-c service.daemon=${options.daemonId}` };
  // keepAlive: a state store that vanished without closing the connection is noticed.
  // connectionTimeoutMillis: a checkout fails (and its request with it) instead of waiting forever
  // while the database is unreachable.
  const pool = guardPool(new Pool({ connectionString: url, max: options.poolMax ?? 10, keepAlive: true, connectionTimeoutMillis: 10_000, ...daemon }));
  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof EngineError) throw err;
    throw new EngineError('connection', `cannot open the PostgreSQL state store: ${(err as Error).message}`, err);
  }
  return new PostgresStore(pool, options, url);
}
