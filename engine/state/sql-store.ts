/**
 * The StateStore, once, over a Dialect (sql-dialect.ts): SQLite
 * (sqlite-store.ts, the embedded default) or PostgreSQL (postgres-store.ts,
 * several daemons sharing one state). Every query is one SQL text with `$n`
 * parameters; a method of several statements is one Work, which the backend
 * runs in a transaction (`write`) or statement by statement (`read`). Where
 * the backends differ the Dialect says how: row locks and SKIP LOCKED (a
 * SQLite write transaction locks the whole file), list parameters, the
 * cluster fields, and the operations with a strategy of their own.
 */
import { timingSafeEqual } from 'node:crypto';
import { newExecId, newJobId, newProjectId } from './ids.js';
import { executionFilter } from './execution-filter.js';
import * as R from './records.js';
import { PROJECT_ACTIVE_SQL, projectDeleteStatements, projectHasActive, TOKEN_LIST_SQL, tokenFromRow } from './project-records.js';
import { publicExecutionsJson } from './public-execution.js';
import { changes, row, rows, values, type Dialect, type RecordKind, type Row } from './sql-dialect.js';
import * as W from './execution-work.js';
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

const GIT_COLUMNS = ['git_url', 'git_branch', 'git_enabled', 'git_poll_interval', 'git_last_sha', 'git_last_pull', 'git_last_error'];
const params$ = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(', ');
const INSERT_EXECUTION = `INSERT INTO executions (${R.EXECUTION_COLUMNS.join(', ')}) VALUES (${params$(R.EXECUTION_COLUMNS.length)})`;
const BIGINT_COLUMNS: ReadonlySet<string> = new Set(['row_count', 'byte_count']);

/** A record's whole output, from its chunks in order, in the same statement (one snapshot). */
const outputOf = (kind: RecordKind) =>
  `(SELECT string_agg(o.chunk, '' ORDER BY o.n) FROM ${kind}_output o WHERE o.exec_id = t.exec_id AND o.${kind}_id = t.${kind}_id) AS output`;

export class SqlStore implements StateStore {
  readonly kind: 'sqlite' | 'postgres';
  private readonly cap: number;
  private readonly selectExecutions: string;

  constructor(private readonly d: Dialect, options: StateStoreOptions) {
    this.kind = d.kind;
    this.cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
    this.selectExecutions = `SELECT ${d.executionColumns} FROM executions e`;
  }

  private async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.d.read(rows(sql, params));
  }

  private async one(sql: string, params: readonly unknown[] = []): Promise<Row | undefined> {
    return this.d.read(row(sql, params));
  }

  private async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.d.read(changes(sql, params));
  }

  // ---- projects ----

  async createProject(input: { name: string; git?: GitRecord | null; id?: string; created?: string }): Promise<ProjectRecord> {
    const git = input.git ? R.mergeGit(null, input.git) : null;
    const v = [input.id ?? newProjectId(), input.name, ...R.gitValues(git, this.d.bool), R.canonicalTime(input.created ?? R.nowIso(), 'created')];
    try {
      return R.projectFromRow((await this.one(`INSERT INTO projects (id, name, ${GIT_COLUMNS.join(', ')}, created) VALUES (${params$(10)}) RETURNING *`, v))!);
    } catch (err) {
      if (this.d.violates(err, 'unique')) throw R.projectTaken(input.name);
      throw err;
    }
  }

  async updateProjectGit(projectId: string, patch: Partial<GitRecord> | null): Promise<ProjectRecord | undefined> {
    const d = this.d;
    return d.write(
      (function* () {
        const current = yield* row(`SELECT * FROM projects WHERE id = $1${d.lockRows}`, [projectId]);
        if (!current) return undefined;
        const git = patch === null ? null : R.mergeGit(R.projectFromRow(current).git, patch);
        const sets = GIT_COLUMNS.map((col, i) => `${col} = $${i + 1}`).join(', ');
        return R.projectFromRow((yield* row(`UPDATE projects SET ${sets} WHERE id = $8 RETURNING *`, [...R.gitValues(git, d.bool), projectId]))!);
      })(),
    );
  }

  async getProject(projectId: string): Promise<ProjectRecord | undefined> {
    const r = await this.one('SELECT * FROM projects WHERE id = $1', [projectId]);
    return r && R.projectFromRow(r);
  }

  async getProjectByName(name: string): Promise<ProjectRecord | undefined> {
    const r = await this.one('SELECT * FROM projects WHERE name = $1', [name]);
    return r && R.projectFromRow(r);
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
      await this.run('INSERT INTO tokens (digest, project_id, label, created) VALUES ($1, $2, $3, $4)', [digest, projectId, R.cleanText(label), R.canonicalTime(created ?? R.nowIso(), 'created')]);
    } catch (err) {
      if (this.d.violates(err, 'foreign_key')) throw R.projectNotFound(projectId);
      throw err;
    }
  }

  /**
   * Known digests and their projects, kept while no other connection has
   * committed (Dialect.dataVersion; never on PostgreSQL, which cannot tell),
   * so a token revoked by an operator command is refused from the next turn
   * of the event loop. This store's own writes cannot make an entry wrong: it
   * only ever adds tokens (revoking clears it), and unknown digests are not
   * kept (each is looked up).
   */
  private readonly tokenCache = new Map<string, string>();
  private tokenCacheVersion: number | undefined = -1;

  async projectIdForToken(digest: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{64}$/.test(digest)) return undefined;
    const version = this.d.dataVersion();
    if (version !== this.tokenCacheVersion) {
      this.tokenCache.clear();
      this.tokenCacheVersion = version;
    }
    const cached = version === undefined ? undefined : this.tokenCache.get(digest);
    if (cached !== undefined) return cached;
    const r = await this.one('SELECT digest, project_id FROM tokens WHERE digest = $1', [digest]);
    if (!r) return undefined;
    if (!timingSafeEqual(Buffer.from(String(r.digest), 'hex'), Buffer.from(digest, 'hex'))) return undefined;
    const projectId = String(r.project_id);
    if (version !== undefined && this.tokenCache.size < 10_000) this.tokenCache.set(digest, projectId);
    return projectId;
  }

  async listTokens(): Promise<TokenInfo[]> {
    return (await this.all(TOKEN_LIST_SQL)).map(tokenFromRow);
  }

  async revokeToken(digest: string): Promise<boolean> {
    this.tokenCache.clear(); // this store's own write: the data version does not change for it
    return (await this.run('DELETE FROM tokens WHERE digest = $1', [digest])) > 0;
  }

  async deleteProject(projectId: string): Promise<boolean> {
    this.tokenCache.clear();
    const d = this.d;
    return d.write(
      (function* () {
        // PostgreSQL: FOR UPDATE conflicts with the key-share lock every insert referencing the project takes: none slips in meanwhile.
        if (!(yield* row(`SELECT 1 FROM projects WHERE id = $1${d.lockRows}`, [projectId]))) return false;
        const active = Number((yield* row(PROJECT_ACTIVE_SQL, [projectId]))!.n);
        if (active > 0) throw projectHasActive(projectId, active);
        for (const sql of projectDeleteStatements(d.kind)) yield* changes(sql, [projectId]);
        return true;
      })(),
    );
  }

  // ---- jobs ----

  async createJob(job: NewJob): Promise<JobRecord> {
    const created = job.created ?? R.nowIso();
    const v = R.jobValues({ ...job, id: job.id ?? newJobId() }, created, job.updated ?? created, this.d.bool);
    try {
      return R.jobFromRow((await this.one(`INSERT INTO jobs (${R.JOB_COLUMNS.join(', ')}) VALUES (${params$(v.length)}) RETURNING *`, v))!);
    } catch (err) {
      if (this.d.violates(err, 'foreign_key')) throw R.projectNotFound(job.project_id);
      throw err;
    }
  }

  async replaceJob(job: Omit<JobRecord, 'created' | 'updated'> & { updated?: string }): Promise<JobRecord | undefined> {
    const updated = job.updated ?? R.nowIso();
    const v = R.jobValues(job, updated, updated, this.d.bool);
    const cols = [...R.JOB_COLUMNS.slice(2, -2), 'updated']; // name … config, updated
    const sets = cols.map((c, i) => `${c} = $${i + 1}`).join(', ');
    const p = [...v.slice(2, -2), v[v.length - 1], job.project_id, job.id];
    const r = await this.one(`UPDATE jobs SET ${sets} WHERE project_id = $${cols.length + 1} AND id = $${cols.length + 2} RETURNING *`, p);
    return r && R.jobFromRow(r);
  }

  async deleteJob(projectId: string, jobId: string): Promise<boolean> {
    const d = this.d;
    return d.write(
      (function* () {
        if (!(yield* row(`SELECT 1 FROM jobs WHERE project_id = $1 AND id = $2${d.lockRows}`, [projectId, jobId]))) return false;
        if (yield* row(`SELECT 1 FROM executions WHERE status IN ${W.ACTIVE} AND ${d.unindexed('job_id')} = $1`, [jobId])) throw R.jobHasActive(jobId);
        return (yield* changes('DELETE FROM jobs WHERE project_id = $1 AND id = $2', [projectId, jobId])) > 0;
      })(),
    );
  }

  async getJob(projectId: string, jobId: string): Promise<JobRecord | undefined> {
    const r = await this.one('SELECT * FROM jobs WHERE project_id = $1 AND id = $2', [projectId, jobId]);
    return r && R.jobFromRow(r);
  }

  async listJobs(projectId: string, filter: { name?: string; file_name?: string; type?: JobType } = {}): Promise<JobRecord[]> {
    const where = ['project_id = $1'];
    const p: unknown[] = [projectId];
    for (const k of ['name', 'file_name', 'type'] as const) {
      if (filter[k] !== undefined) where.push(`${k} = $${p.push(filter[k])}`);
    }
    return (await this.all(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created, id`, p)).map(R.jobFromRow);
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
    // One MAX per job: each is a single seek on executions_job_start.
    const sql = `SELECT l.value AS job_id, (SELECT MAX(start_time) FROM executions WHERE job_id = l.value) AS t FROM ${this.d.listRows('$1')}`;
    const found = await this.all(sql, [this.d.list(jobIds)]);
    return new Map(found.filter((r) => r.t !== null).map((r) => [String(r.job_id), String(r.t)]));
  }

  // ---- executions ----

  async createExecution(input: NewExecution, options: { readonly scheduleDue?: string } = {}): Promise<ExecutionRecord> {
    const v = R.executionValues({ ...input, exec_id: input.exec_id ?? newExecId() });
    const insert = `${INSERT_EXECUTION} RETURNING ${this.d.executionColumns}`;
    const claimed = options.scheduleDue !== undefined && this.d.withScheduleClaim !== undefined;
    const sql = claimed ? this.d.withScheduleClaim!(insert, v.length) : insert;
    try {
      return W.executionFrom((await this.d.read(values(sql, claimed ? [...v, input.job_id, options.scheduleDue] : v)))[0]!, new Map());
    } catch (err) {
      if (this.d.violates(err, 'foreign_key')) throw R.projectNotFound(input.project_id);
      if (this.d.violates(err, 'one_running_per_job')) throw R.alreadyRunning(String(v[0]));
      throw err;
    }
  }

  async insertExecutionsBulk(inputs: readonly NewExecution[]): Promise<void> {
    const all = inputs.map((e) => R.executionValues({ ...e, exec_id: e.exec_id ?? newExecId() }));
    await this.d.insertMany('executions', R.EXECUTION_COLUMNS, BIGINT_COLUMNS, all);
  }

  async getExecution(projectId: string, execId: string): Promise<ExecutionRecord | undefined> {
    return (await this.d.read(W.executions(this.d, 'WHERE exec_id = $1 AND project_id = $2', [execId, projectId])))[0];
  }

  async findExecution(execId: string): Promise<ExecutionRecord | undefined> {
    return (await this.d.read(W.executions(this.d, 'WHERE exec_id = $1', [execId])))[0];
  }

  changeToken(): string | undefined {
    return this.d.changeToken();
  }

  async listExecutions(q: ExecutionQuery): Promise<ExecutionRecord[]> {
    const f = executionFilter(q);
    return f === null ? [] : this.d.read(W.executions(this.d, f.clause, f.params));
  }

  async listExecutionsJson(q: ExecutionQuery): Promise<Buffer> {
    if (this.d.executionPage) return this.d.executionPage(q);
    return publicExecutionsJson(await this.listExecutions(q));
  }

  async updateExecution(execId: string, patch: ExecutionPatch): Promise<boolean> {
    const update = W.executionUpdate(this.d, execId, patch);
    try {
      return await this.d.patchExecution(update.sql, update.params, (status, end) => W.closeOpen(this.d, [execId], R.closingStatus(status as ExecutionStatus), end));
    } catch (err) {
      if (this.d.violates(err, 'one_running_per_job')) throw R.alreadyRunning(execId);
      throw err;
    }
  }

  async activeExecutions(jobId: string): Promise<ExecutionRecord[]> {
    // SQLite: `+job_id` keeps the planner on executions_status (few active rows) rather than
    // walking every execution the job ever had through executions_job_start.
    return this.d.read(W.executions(this.d, `WHERE status IN ${W.ACTIVE} AND ${this.d.unindexed('job_id')} = $1 ORDER BY exec_id`, [jobId]));
  }

  async claimNextQueued(options: ClaimOptions = {}): Promise<ExecutionRecord | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        const claimed = await this.d.write(W.claim(this.d, options));
        return claimed && (await this.d.read(W.withMaps(this.d, [claimed])))[0];
      } catch (err) {
        // PostgreSQL: another daemon started this job between our check and update: look again.
        if (this.d.violates(err, 'one_running_per_job') && attempt < 5) continue;
        throw err;
      }
    }
  }

  async markRunningInterrupted(now: string, error: string, owner?: string): Promise<string[]> {
    return this.d.write(W.interruptRunning(this.d, R.canonicalTime(now, 'now'), error, owner));
  }

  async finishActive(execId: string, status: ExecutionStatus, now: string): Promise<number> {
    R.assertTerminal(status);
    return this.d.write(W.closeOpen(this.d, [execId], status, R.canonicalTime(now, 'now')));
  }

  // ---- tasks and steps ----

  async upsertTask(t: TaskUpsert): Promise<boolean> {
    return this.d.read(W.upsertTask(this.d, t));
  }

  async upsertTasks(tasks: readonly TaskUpsert[]): Promise<void> {
    const d = this.d;
    await d.write(
      (function* () {
        for (const t of tasks) yield* W.upsertTask(d, t);
      })(),
    );
  }

  async upsertStep(s: StepUpsert): Promise<boolean> {
    return this.d.read(W.upsertStep(this.d, s));
  }

  private async append(kind: RecordKind, execId: string, id: string, raw: string): Promise<void> {
    if (raw === '') return;
    const text = R.cleanText(raw);
    await this.d.append(kind, execId, id, text, Buffer.byteLength(text, 'utf8'), this.cap, () => W.crossing(this.d, kind, execId, id, text, this.cap));
  }

  async appendTaskOutput(execId: string, taskId: string, text: string): Promise<void> {
    return this.append('task', execId, taskId, text);
  }

  async appendStepOutput(execId: string, stepId: string, text: string): Promise<void> {
    return this.append('step', execId, stepId, text);
  }

  async listTasks(execId: string, filter: { status?: ExecutionStatus; stream?: string; excludeOutput?: boolean } = {}): Promise<TaskRecord[]> {
    const p: unknown[] = [execId];
    const where = ['exec_id = $1'];
    if (filter.status !== undefined) where.push(`status = $${p.push(filter.status)}`);
    if (filter.stream !== undefined) where.push(`stream_name = $${p.push(filter.stream)}`);
    const output = filter.excludeOutput ? '' : `, ${outputOf('task')}`;
    const found = await this.all(`SELECT ${W.TASK_COLUMNS}${output} FROM tasks t WHERE ${where.join(' AND ')} ORDER BY seq, task_id`, p);
    return found.map((r) => R.taskFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  async listSteps(execId: string, filter: { stepIdPrefix?: string; excludeOutput?: boolean } = {}): Promise<StepRecord[]> {
    const output = filter.excludeOutput ? '' : `, ${outputOf('step')}`;
    let sql = `SELECT ${W.STEP_COLUMNS}${output} FROM steps t WHERE exec_id = $1`;
    const p: unknown[] = [execId];
    const prefix = filter.stepIdPrefix;
    if (prefix !== undefined && prefix !== '') {
      sql += ' AND (step_id = $2 OR (step_id >= $3 AND step_id < $4) OR (step_id >= $5 AND step_id < $6))';
      p.push(prefix, `${prefix}.`, R.prefixUpperBound(`${prefix}.`), `${prefix}[`, R.prefixUpperBound(`${prefix}[`));
    }
    const found = await this.all(`${sql} ORDER BY seq, step_id`, p);
    return found.map((r) => R.stepFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  // ---- build watermarks ----

  async getWatermark(target: string, model: string): Promise<Watermark | undefined> {
    const r = await this.one('SELECT value, updated_at FROM service_build_watermarks WHERE target = $1 AND model = $2', [target, model]);
    return r && { value: String(r.value), updatedAt: String(r.updated_at) };
  }

  async setWatermark(target: string, model: string, value: string, now?: string): Promise<void> {
    await this.run(
      'INSERT INTO service_build_watermarks (target, model, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (target, model) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [target, model, value, R.canonicalTime(now ?? R.nowIso(), 'now')],
    );
  }

  ping(timeoutMs: number): Promise<number> {
    return this.d.ping(timeoutMs);
  }

  close(): Promise<void> {
    return this.d.close();
  }
}
