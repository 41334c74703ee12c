/**
 * The embedded StateStore backend: one better-sqlite3 connection on a file in
 * WAL mode (readers never block the writer), busy_timeout for the operator
 * commands that open the same file from another process, foreign keys on.
 *
 * better-sqlite3 is synchronous, so every method runs to completion before
 * the next starts and a multi-statement change is simply a `transaction()`;
 * writes use IMMEDIATE transactions so another process's writer makes them
 * wait (busy_timeout) instead of failing on a lock upgrade. Statements are
 * prepared once and cached by their text.
 *
 * Output appends are the hot write (every log line of a running task): one
 * guarded UPDATE of the record's counters and one INSERT of a chunk row, in
 * one prepared IMMEDIATE transaction. Measured on the 2-core dev machine with
 * synchronous=normal: ≈25–30 µs per append on tmpfs (the CPU part; the bare
 * two statements in better-sqlite3 cost the same), ≈50–110 µs on its disk,
 * where WAL page writes and the periodic checkpoint dominate. Rewriting a
 * growing text column instead would copy the whole log on every line. A
 * runtime that buffers lines and flushes every ~100 ms pays this per flush.
 */
import Database from 'better-sqlite3';
import { openDatabase, pragma } from './sqlite-database.js';
import { timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { newExecId, newJobId, newProjectId } from './ids.js';
import { migrateSqlite } from './migrations.js';
import { executionFilter, executionPageSql, PUBLIC_JSON } from './sqlite-execution-page.js';
import { SqliteReaders } from './sqlite-readers.js';
import { timedRead } from './timed-read.js';
import * as R from './records.js';
import { PROJECT_ACTIVE_SQL, projectDeleteStatements, projectHasActive, TOKEN_LIST_SQL, tokenFromRow } from './project-records.js';
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
  type StatusMap,
  type StateStoreOptions,
  type StepRecord,
  type StepUpsert,
  type TaskRecord,
  type TaskUpsert,
  type TokenInfo,
  type Watermark,
} from './store.js';

type Row = Record<string, unknown>;

const b = (v: boolean): number => (v ? 1 : 0);
const ACTIVE = "('queued', 'running')";
const GIT_COLUMNS = 'git_url, git_branch, git_enabled, git_poll_interval, git_last_sha, git_last_pull, git_last_error';
const TASK_COLUMNS = 'exec_id, task_id, seq, stream_name, object, mode, status, error, start_time, end_time, row_count, byte_count, metrics';
const STEP_COLUMNS = 'exec_id, step_id, seq, type, status, error, start_time, end_time, state';
const SELECT_EXECUTIONS = `SELECT ${R.EXECUTION_COLUMNS.join(', ')} FROM executions`;
const REFRESH_PUBLIC_JSON = `UPDATE executions AS e SET public_json = ${PUBLIC_JSON} WHERE exec_id = ? AND status NOT IN ${ACTIVE}`;
const INSERT_EXECUTION = `INSERT INTO executions (${R.EXECUTION_COLUMNS.join(', ')}) VALUES (${R.EXECUTION_COLUMNS.map(() => '?').join(', ')})`;

/** Named parameters for an optional field: `@has_<k>` (0/1) and `@<k>`. */
function flatten(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== null && typeof v === 'object' && 'has' in v) {
      const g = v as R.Given;
      out[`has_${k}`] = b(g.has);
      out[k] = g.value;
    } else out[k] = v;
  }
  return out;
}

const keep = (col: string, table: string, param = col) => `${col} = CASE WHEN @has_${param} THEN excluded.${col} ELSE ${table}.${col} END`;

/** A record's whole output, from its chunks in order, in the same statement (one snapshot). */
const outputOf = (kind: 'task' | 'step') =>
  `(SELECT group_concat(o.chunk, '' ORDER BY o.n) FROM ${kind}_output o WHERE o.exec_id = t.exec_id AND o.${kind}_id = t.${kind}_id) AS output`;

const sqliteCode = (err: unknown): string | undefined => (err instanceof Database.SqliteError ? err.code : undefined);

class SqliteStore implements StateStore {
  readonly kind = 'sqlite' as const;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly cap: number;

  private readonly readers: SqliteReaders | undefined;

  constructor(private readonly db: Database.Database, options: StateStoreOptions, file: string) {
    this.cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
    const threads = options.readerThreads ?? 0;
    this.readers = threads > 0 && file !== ':memory:' ? new SqliteReaders(file, threads) : undefined;
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.appenders = { task: this.appender('task'), step: this.appender('step') };
  }

  /**
   * Counts the statements of this connection that may write (bumped before
   * each runs; a write that changes nothing only costs a spurious change of
   * the token): the own-writes half of changeToken, without a query. Every
   * statement comes through st() except the appenders' own, which count
   * themselves; a transaction counts only through its statements, so one
   * that only reads (a claim that finds nothing queued) changes nothing.
   */
  private writes = 0;

  private st(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    if (!s.readonly) this.writes++;
    return s;
  }

  /** Statements returning rows as value arrays (raw mode), cached apart from the object-row ones. */
  private readonly rawStatements = new Map<string, Database.Statement>();
  private rawSt(sql: string): Database.Statement {
    let s = this.rawStatements.get(sql);
    if (!s) this.rawStatements.set(sql, (s = this.db.prepare(sql).raw(true)));
    return s;
  }

  private all = (sql: string, ...params: unknown[]): Row[] => this.st(sql).all(...params) as Row[];
  private one = (sql: string, ...params: unknown[]): Row | undefined => this.st(sql).get(...params) as Row | undefined;
  private run = (sql: string, ...params: unknown[]): number => this.st(sql).run(...params).changes;
  /** Runs `fn` in an IMMEDIATE transaction, through one wrapper made once rather than one per call. */
  private write<T>(fn: () => T): T {
    return this.inTransaction.immediate(fn) as T;
  }

  // ---- projects ----

  async createProject(input: { name: string; git?: GitRecord | null; id?: string; created?: string }): Promise<ProjectRecord> {
    const git = input.git ? R.mergeGit(null, input.git) : null;
    try {
      const row = this.one(
        `INSERT INTO projects (id, name, ${GIT_COLUMNS}, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        input.id ?? newProjectId(), input.name, ...R.gitValues(git, b), R.canonicalTime(input.created ?? R.nowIso(), 'created'),
      );
      return R.projectFromRow(row!);
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE') throw R.projectTaken(input.name);
      throw err;
    }
  }

  async updateProjectGit(projectId: string, patch: Partial<GitRecord> | null): Promise<ProjectRecord | undefined> {
    return this.write(() => {
      const current = this.one('SELECT * FROM projects WHERE id = ?', projectId);
      if (!current) return undefined;
      const git = patch === null ? null : R.mergeGit(R.projectFromRow(current).git, patch);
      const sets = GIT_COLUMNS.split(', ').map((c) => `${c} = ?`).join(', ');
      return R.projectFromRow(this.one(`UPDATE projects SET ${sets} WHERE id = ? RETURNING *`, ...R.gitValues(git, b), projectId)!);
    });
  }

  async getProject(projectId: string): Promise<ProjectRecord | undefined> {
    const row = this.one('SELECT * FROM projects WHERE id = ?', projectId);
    return row && R.projectFromRow(row);
  }

  async getProjectByName(name: string): Promise<ProjectRecord | undefined> {
    const row = this.one('SELECT * FROM projects WHERE name = ?', name);
    return row && R.projectFromRow(row);
  }

  async listProjects(): Promise<ProjectRecord[]> {
    return this.all('SELECT * FROM projects ORDER BY name').map(R.projectFromRow);
  }

  async projectCounts(projectId: string): Promise<ProjectCounts> {
    const r = this.one('SELECT (SELECT COUNT(*) FROM jobs WHERE project_id = ?) AS jobs, (SELECT COUNT(*) FROM executions WHERE project_id = ?) AS executions', projectId, projectId)!;
    return { jobs: Number(r.jobs), executions: Number(r.executions) };
  }

  // ---- tokens ----

  async addToken(projectId: string, digest: string, label = '', created?: string): Promise<void> {
    R.assertDigest(digest);
    try {
      this.run('INSERT INTO tokens (digest, project_id, label, created) VALUES (?, ?, ?, ?)', digest, projectId, R.cleanText(label), R.canonicalTime(created ?? R.nowIso(), 'created'));
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw R.projectNotFound(projectId);
      throw err;
    }
  }

  /**
   * Known digests and their projects, kept while no other connection has
   * committed (the data version, as changeToken reads it), so a token
   * revoked by an operator command is refused from the next turn of the
   * event loop. This store's own writes cannot make an entry wrong: it only
   * ever adds tokens (revoking clears it), and unknown digests are not kept (each is looked up).
   */
  private readonly tokenCache = new Map<string, string>();
  private tokenCacheVersion = -1;

  async projectIdForToken(digest: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{64}$/.test(digest)) return undefined;
    const version = this.dataVersion();
    if (version !== this.tokenCacheVersion) {
      this.tokenCache.clear();
      this.tokenCacheVersion = version;
    }
    const cached = this.tokenCache.get(digest);
    if (cached !== undefined) return cached;
    const row = this.one('SELECT digest, project_id FROM tokens WHERE digest = ?', digest);
    if (!row) return undefined;
    if (!timingSafeEqual(Buffer.from(String(row.digest), 'hex'), Buffer.from(digest, 'hex'))) return undefined;
    const projectId = String(row.project_id);
    if (this.tokenCache.size < 10_000) this.tokenCache.set(digest, projectId);
    return projectId;
  }

  async listTokens(): Promise<TokenInfo[]> {
    return this.all(TOKEN_LIST_SQL).map(tokenFromRow);
  }

  async revokeToken(digest: string): Promise<boolean> {
    this.tokenCache.clear(); // this store's own write: the data version does not change for it
    return this.run('DELETE FROM tokens WHERE digest = ?', digest) > 0;
  }

  async deleteProject(projectId: string): Promise<boolean> {
    this.tokenCache.clear();
    return this.write(() => {
      if (!this.one('SELECT 1 FROM projects WHERE id = ?', projectId)) return false;
      const active = Number(this.one(PROJECT_ACTIVE_SQL.replace('$1', '?'), projectId)!.n);
      if (active > 0) throw projectHasActive(projectId, active);
      for (const sql of projectDeleteStatements('sqlite')) this.run(sql.replaceAll('$1', '?'), projectId);
      return true;
    });
  }

  // ---- jobs ----

  async createJob(job: NewJob): Promise<JobRecord> {
    const created = job.created ?? R.nowIso();
    const values = R.jobValues({ ...job, id: job.id ?? newJobId() }, created, job.updated ?? created, b);
    try {
      return R.jobFromRow(this.one(`INSERT INTO jobs (${R.JOB_COLUMNS.join(', ')}) VALUES (${R.JOB_COLUMNS.map(() => '?').join(', ')}) RETURNING *`, ...values)!);
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw R.projectNotFound(job.project_id);
      throw err;
    }
  }

  async replaceJob(job: Omit<JobRecord, 'created' | 'updated'> & { updated?: string }): Promise<JobRecord | undefined> {
    const updated = job.updated ?? R.nowIso();
    const values = R.jobValues(job, updated, updated, b);
    const cols = R.JOB_COLUMNS.slice(2, -2); // name … config
    const sets = [...cols, 'updated'].map((c) => `${c} = ?`).join(', ');
    const row = this.one(`UPDATE jobs SET ${sets} WHERE project_id = ? AND id = ? RETURNING *`, ...values.slice(2, -2), values[values.length - 1], job.project_id, job.id);
    return row && R.jobFromRow(row);
  }

  async deleteJob(projectId: string, jobId: string): Promise<boolean> {
    return this.write(() => {
      if (!this.one('SELECT 1 FROM jobs WHERE project_id = ? AND id = ?', projectId, jobId)) return false;
      if (this.one(`SELECT 1 FROM executions WHERE status IN ${ACTIVE} AND +job_id = ?`, jobId)) throw R.jobHasActive(jobId);
      return this.run('DELETE FROM jobs WHERE project_id = ? AND id = ?', projectId, jobId) > 0;
    });
  }

  async getJob(projectId: string, jobId: string): Promise<JobRecord | undefined> {
    const row = this.one('SELECT * FROM jobs WHERE project_id = ? AND id = ?', projectId, jobId);
    return row && R.jobFromRow(row);
  }

  async listJobs(projectId: string, filter: { name?: string; file_name?: string; type?: JobType } = {}): Promise<JobRecord[]> {
    const where = ['project_id = ?'];
    const params: unknown[] = [projectId];
    for (const k of ['name', 'file_name', 'type'] as const) {
      if (filter[k] === undefined) continue;
      where.push(`${k} = ?`);
      params.push(filter[k]);
    }
    return this.all(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created, id`, ...params).map(R.jobFromRow);
  }

  async jobsByFile(projectId: string, path: string): Promise<JobRecord[]> {
    const p = path.replace(/\/+$/, '');
    const sql = 'SELECT * FROM jobs WHERE project_id = ? AND (file_name = ? OR (file_name >= ? AND file_name < ?)) ORDER BY created, id';
    return this.all(sql, projectId, p, `${p}/`, R.prefixUpperBound(`${p}/`)).map(R.jobFromRow);
  }

  async latestStartTime(jobId: string): Promise<string | null> {
    return (this.one('SELECT MAX(start_time) AS t FROM executions WHERE job_id = ?', jobId)?.t as string | null) ?? null;
  }

  async latestStartTimes(jobIds: readonly string[]): Promise<Map<string, string>> {
    // One MAX per job: each is a single seek on executions_job_start.
    const sql = 'SELECT value AS job_id, (SELECT MAX(start_time) FROM executions WHERE job_id = value) AS t FROM json_each(?)';
    return new Map(this.all(sql, JSON.stringify(jobIds)).filter((r) => r.t !== null).map((r) => [String(r.job_id), String(r.t)]));
  }

  // ---- executions ----

  /** Status maps of a page of executions: one grouped query; an execution has either tasks or steps. */
  private statusMapsOf(execIds: readonly unknown[]): Map<string, StatusMap> {
    const ids = JSON.stringify(execIds);
    const counts = this.all(
      `SELECT exec_id, status, COUNT(*) AS n FROM tasks WHERE exec_id IN (SELECT value FROM json_each(?)) GROUP BY exec_id, status
       UNION ALL
       SELECT exec_id, status, COUNT(*) AS n FROM steps WHERE exec_id IN (SELECT value FROM json_each(?)) GROUP BY exec_id, status`,
      ids, ids,
    );
    return R.statusMaps(counts);
  }

  private withMaps(rows: Row[]): ExecutionRecord[] {
    if (rows.length === 0) return [];
    const maps = this.statusMapsOf(rows.map((r) => r.exec_id));
    return rows.map((r) => R.executionFromRow(r, maps));
  }

  /** `SELECT <execution columns> FROM executions <rest>` as records, read as raw rows (see R.executionFromValues). */
  private executions(rest: string, ...params: unknown[]): ExecutionRecord[] {
    const rows = this.rawSt(`${SELECT_EXECUTIONS} ${rest}`).all(...params) as unknown[][];
    if (rows.length === 0) return [];
    const maps = this.statusMapsOf(rows.map((v) => v[0]));
    return rows.map((v) => R.executionFromValues(v, maps));
  }

  async createExecution(input: NewExecution): Promise<ExecutionRecord> {
    const values = R.executionValues({ ...input, exec_id: input.exec_id ?? newExecId() });
    try {
      return R.executionFromRow(this.one(`${INSERT_EXECUTION} RETURNING *`, ...values)!, new Map());
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw R.projectNotFound(input.project_id);
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE') throw R.alreadyRunning(String(values[0]));
      throw err;
    }
  }

  async insertExecutionsBulk(inputs: readonly NewExecution[]): Promise<void> {
    const insert = this.st(INSERT_EXECUTION);
    this.write(() => {
      for (const e of inputs) insert.run(...R.executionValues({ ...e, exec_id: e.exec_id ?? newExecId() }));
    });
  }

  async getExecution(projectId: string, execId: string): Promise<ExecutionRecord | undefined> {
    return this.executions('WHERE exec_id = ? AND project_id = ?', execId, projectId)[0];
  }

  async findExecution(execId: string): Promise<ExecutionRecord | undefined> {
    return this.executions('WHERE exec_id = ?', execId)[0];
  }

  /**
   * `data_version`, read at most once per turn of the event loop (it costs a
   * statement, ≈3 µs, and a busy daemon asks for the token on every page
   * request): it changes when another connection — in this process or
   * another (operator commands) — commits. Undefined when not read this turn.
   */
  private dataVersionThisTurn: number | undefined;

  private dataVersion(): number {
    if (this.dataVersionThisTurn === undefined) {
      this.dataVersionThisTurn = (this.rawSt('PRAGMA data_version').get() as [number])[0];
      setImmediate(() => (this.dataVersionThisTurn = undefined)).unref();
    }
    return this.dataVersionThisTurn;
  }

  /**
   * This connection's write count and the data version together change on
   * every commit that can alter a read: a write of this store at once, a
   * commit of another connection from the next turn of the event loop on
   * (a reader of the token in the same turn sees the state as of that
   * turn's start, as if it had asked a moment earlier). Inside a
   * transaction this connection would read its own uncommitted rows, which a
   * rollback could undo: no token then.
   */
  changeToken(): string | undefined {
    if (this.db.inTransaction) return undefined;
    return `${this.dataVersion()}.${this.writes}`;
  }

  async listExecutions(q: ExecutionQuery): Promise<ExecutionRecord[]> {
    const f = executionFilter(q);
    return f === null ? [] : this.executions(f.clause, ...f.params);
  }

  /** On a reader thread when the store has them (the daemon), else on this connection. */
  async listExecutionsJson(q: ExecutionQuery): Promise<Buffer> {
    const page = executionPageSql(q);
    if (page === null) return Buffer.from('[]');
    if (this.readers !== undefined) return this.readers.jsonArray(page.sql, page.params, page.fill);
    const rows = (this.rawSt(page.sql).all(...page.params) as [string | number][]).map((r) => r[0]);
    const missing = rows.filter((v) => typeof v === 'number');
    if (missing.length > 0) {
      const texts = new Map(this.rawSt(page.fill).all(JSON.stringify(missing)) as [number, string][]);
      for (let i = 0; i < rows.length; i++) if (typeof rows[i] === 'number') rows[i] = texts.get(rows[i] as number)!;
    }
    return Buffer.from(`[${rows.join(',')}]`);
  }

  async updateExecution(execId: string, patch: ExecutionPatch): Promise<boolean> {
    const p = flatten({ id: execId, ...R.executionPatchValues(patch, R.nowIso()) });
    const sql = `UPDATE executions SET
        status = CASE WHEN @has_status THEN @status ELSE status END,
        error = CASE WHEN @has_error THEN @error ELSE error END,
        end_time = CASE WHEN @has_end_time THEN @end_time ELSE end_time END,
        row_count = CASE WHEN @has_rows THEN @rows ELSE row_count END,
        byte_count = CASE WHEN @has_bytes THEN @bytes ELSE byte_count END,
        build = CASE WHEN @has_build THEN @build ELSE build END
      WHERE exec_id = @id AND status IN ${ACTIVE} RETURNING status, end_time`;
    try {
      return this.write(() => {
        const row = this.one(sql, p);
        if (!row) return false;
        const status = row.status as ExecutionStatus;
        if (status !== 'queued' && status !== 'running') this.closeOpen(execId, R.closingStatus(status), String(row.end_time));
        return true;
      });
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE') throw R.alreadyRunning(execId);
      throw err;
    }
  }

  private closeOpen(execId: string, status: ExecutionStatus, now: string): number {
    let n = 0;
    for (const table of ['tasks', 'steps']) {
      n += this.run(`UPDATE ${table} SET status = ?, end_time = COALESCE(end_time, ?) WHERE exec_id = ? AND status IN ${ACTIVE}`, status, now, execId);
    }
    // Each closed record dropped the execution's stored JSON (migration 3): build it again, once.
    if (n > 0) this.run(REFRESH_PUBLIC_JSON, execId);
    return n;
  }

  async activeExecutions(jobId: string): Promise<ExecutionRecord[]> {
    // `+job_id` keeps the planner on executions_status (few active rows) rather than
    // walking every execution the job ever had through executions_job_start.
    return this.executions(`WHERE status IN ${ACTIVE} AND +job_id = ? ORDER BY exec_id`, jobId);
  }

  async claimNextQueued(options: ClaimOptions = {}): Promise<ExecutionRecord | undefined> {
    const row = this.write(() => {
      if (options.maxRunning !== undefined) {
        const running = options.owner === undefined
          ? this.one("SELECT COUNT(*) AS n FROM executions WHERE status = 'running'")
          : this.one("SELECT COUNT(*) AS n FROM executions WHERE status = 'running' AND claimed_by = ?", options.owner);
        if (Number(running!.n) >= options.maxRunning) return undefined;
      }
      const next = this.one(
        `SELECT exec_id FROM executions e WHERE e.status = 'queued'
           AND NOT EXISTS (SELECT 1 FROM executions r WHERE r.job_id = e.job_id AND r.status = 'running')
         ORDER BY e.exec_id LIMIT 1`,
      );
      if (!next) return undefined;
      return this.one("UPDATE executions SET status = 'running', claimed_by = ? WHERE exec_id = ? RETURNING *", options.owner ?? null, next.exec_id);
    });
    return row && this.withMaps([row])[0];
  }

  async markRunningInterrupted(now: string, error: string, owner?: string): Promise<string[]> {
    const at = R.canonicalTime(now, 'now');
    return this.write(() => {
      const ids = (owner === undefined
        ? this.all("SELECT exec_id FROM executions WHERE status = 'running' ORDER BY exec_id")
        : this.all("SELECT exec_id FROM executions WHERE status = 'running' AND claimed_by = ? ORDER BY exec_id", owner)
      ).map((r) => String(r.exec_id));
      for (const id of ids) {
        this.run("UPDATE executions SET status = 'interrupted', error = ?, end_time = ? WHERE exec_id = ? AND status = 'running'", R.cleanText(error), at, id);
        this.closeOpen(id, 'interrupted', at);
      }
      return ids;
    });
  }

  async finishActive(execId: string, status: ExecutionStatus, now: string): Promise<number> {
    R.assertTerminal(status);
    const at = R.canonicalTime(now, 'now');
    return this.write(() => this.closeOpen(execId, status, at));
  }

  // ---- tasks and steps ----

  private upsertTaskSync(t: TaskUpsert): boolean {
    const sql = `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (@exec_id, @task_id,
        COALESCE(@seq, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks WHERE exec_id = @exec_id)),
        @stream_name, @object, @mode, @status, @error, @start_time, @end_time, COALESCE(@rows, 0), COALESCE(@bytes, 0), @metrics)
      ON CONFLICT (exec_id, task_id) DO UPDATE SET stream_name = excluded.stream_name, mode = excluded.mode, status = excluded.status,
        ${keep('object', 'tasks')}, ${keep('error', 'tasks')}, ${keep('start_time', 'tasks')}, ${keep('end_time', 'tasks')},
        ${keep('row_count', 'tasks', 'rows')}, ${keep('byte_count', 'tasks', 'bytes')}, ${keep('metrics', 'tasks')}
      WHERE tasks.status IN ${ACTIVE}`;
    try {
      return this.run(sql, flatten(R.taskUpsertValues(t))) > 0;
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw R.executionNotFound(t.exec_id);
      throw err;
    }
  }

  async upsertTask(t: TaskUpsert): Promise<boolean> {
    return this.upsertTaskSync(t);
  }

  async upsertTasks(tasks: readonly TaskUpsert[]): Promise<void> {
    this.write(() => tasks.forEach((t) => this.upsertTaskSync(t)));
  }

  async upsertStep(s: StepUpsert): Promise<boolean> {
    const sql = `INSERT INTO steps (${STEP_COLUMNS}) VALUES (@exec_id, @step_id,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps WHERE exec_id = @exec_id),
        @type, @status, @error, @start_time, @end_time, @state)
      ON CONFLICT (exec_id, step_id) DO UPDATE SET type = excluded.type, status = excluded.status,
        ${keep('error', 'steps')}, ${keep('start_time', 'steps')}, ${keep('end_time', 'steps')}, ${keep('state', 'steps')}
      WHERE steps.status IN ${ACTIVE}`;
    try {
      return this.run(sql, flatten(R.stepUpsertValues(s))) > 0;
    } catch (err) {
      if (sqliteCode(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw R.executionNotFound(s.exec_id);
      throw err;
    }
  }

  /** Per record kind: the output append as one prepared IMMEDIATE transaction, built once (the hot path). */
  private readonly inTransaction: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly appenders: Record<'task' | 'step', (execId: string, id: string, text: string, size: number) => void>;

  private appender(kind: 'task' | 'step'): (execId: string, id: string, text: string, size: number) => void {
    const [table, out, col] = kind === 'task' ? ['tasks', 'task_output', 'task_id'] : ['steps', 'step_output', 'step_id'];
    const grow = this.db.prepare(
      `UPDATE ${table} SET output_bytes = output_bytes + ?, output_chunks = output_chunks + 1
       WHERE exec_id = ? AND ${col} = ? AND output_truncated = 0 AND output_bytes + ? <= ? RETURNING output_chunks`,
    );
    const insert = this.db.prepare(`INSERT INTO ${out} (exec_id, ${col}, n, chunk) VALUES (?, ?, ?, ?)`);
    const current = this.db.prepare(`SELECT output_bytes, output_chunks, output_truncated FROM ${table} WHERE exec_id = ? AND ${col} = ?`);
    const lastChunk = this.db.prepare(`SELECT chunk FROM ${out} WHERE exec_id = ? AND ${col} = ? AND n = ?`);
    const truncate = this.db.prepare(`UPDATE ${table} SET output_bytes = output_bytes + ?, output_chunks = ?, output_truncated = 1 WHERE exec_id = ? AND ${col} = ?`);
    const tx = this.db.transaction((execId: string, id: string, text: string, size: number) => {
      const fast = grow.get(size, execId, id, size, this.cap) as Row | undefined;
      if (fast) return void insert.run(execId, id, fast.output_chunks, text);
      // Crossing the cap (once per record), or already truncated.
      const cur = current.get(execId, id) as Row | undefined;
      if (!cur) throw R.missingRecord(kind, id, execId);
      if (cur.output_truncated) return;
      const n = Number(cur.output_chunks);
      const last = n === 0 ? undefined : (lastChunk.get(execId, id, n) as Row | undefined);
      const cut = R.truncatedAppend(Number(cur.output_bytes), this.cap, text, String(last?.chunk ?? '').endsWith('\n'));
      truncate.run(cut.bytes, n + 1, execId, id);
      insert.run(execId, id, n + 1, cut.chunk);
    });
    return (execId, id, text, size) => {
      this.writes++;
      tx.immediate(execId, id, text, size);
    };
  }

  private append(kind: 'task' | 'step', execId: string, id: string, raw: string): void {
    if (raw === '') return;
    const text = R.cleanText(raw);
    this.appenders[kind](execId, id, text, Buffer.byteLength(text, 'utf8'));
  }

  async appendTaskOutput(execId: string, taskId: string, text: string): Promise<void> {
    this.append('task', execId, taskId, text);
  }

  async appendStepOutput(execId: string, stepId: string, text: string): Promise<void> {
    this.append('step', execId, stepId, text);
  }

  async listTasks(execId: string, filter: { status?: ExecutionStatus; stream?: string; excludeOutput?: boolean } = {}): Promise<TaskRecord[]> {
    const where = ['exec_id = ?'];
    const params: unknown[] = [execId];
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.stream !== undefined) {
      where.push('stream_name = ?');
      params.push(filter.stream);
    }
    const output = filter.excludeOutput ? '' : `, ${outputOf('task')}`;
    const rows = this.all(`SELECT ${TASK_COLUMNS}${output} FROM tasks t WHERE ${where.join(' AND ')} ORDER BY seq, task_id`, ...params);
    return rows.map((r) => R.taskFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  async listSteps(execId: string, filter: { stepIdPrefix?: string; excludeOutput?: boolean } = {}): Promise<StepRecord[]> {
    const output = filter.excludeOutput ? '' : `, ${outputOf('step')}`;
    let sql = `SELECT ${STEP_COLUMNS}${output} FROM steps t WHERE exec_id = ?`;
    const params: unknown[] = [execId];
    const p = filter.stepIdPrefix;
    if (p !== undefined && p !== '') {
      sql += ' AND (step_id = ? OR (step_id >= ? AND step_id < ?) OR (step_id >= ? AND step_id < ?))';
      params.push(p, `${p}.`, R.prefixUpperBound(`${p}.`), `${p}[`, R.prefixUpperBound(`${p}[`));
    }
    const rows = this.all(`${sql} ORDER BY seq, step_id`, ...params);
    return rows.map((r) => R.stepFromRow(r, filter.excludeOutput ? undefined : String(r.output ?? '')));
  }

  // ---- build watermarks ----

  async getWatermark(target: string, model: string): Promise<Watermark | undefined> {
    const row = this.one('SELECT value, updated_at FROM service_build_watermarks WHERE target = ? AND model = ?', target, model);
    return row && { value: String(row.value), updatedAt: String(row.updated_at) };
  }

  async setWatermark(target: string, model: string, value: string, now?: string): Promise<void> {
    this.run(
      'INSERT INTO service_build_watermarks (target, model, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (target, model) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      target, model, value, R.canonicalTime(now ?? R.nowIso(), 'now'),
    );
  }

  async ping(timeoutMs: number): Promise<number> {
    return timedRead(() => this.one('SELECT 1 FROM executions LIMIT 1'), timeoutMs);
  }

  async close(): Promise<void> {
    await this.readers?.close();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating the file and its directory) and migrates a SQLite state store. */
export function openSqliteStore(file: string, options: StateStoreOptions = {}): StateStore {
  const memory = file === ':memory:';
  const path = memory ? file : resolve(file);
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  let db: Database.Database;
  try {
    db = openDatabase(path);
  } catch (err) {
    throw new EngineError('internal', `cannot open state store ${path}: ${(err as Error).message}`, err);
  }
  try {
    pragma(db, 'journal_mode = WAL');
    pragma(db, 'busy_timeout = 5000');
    pragma(db, `synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    pragma(db, 'foreign_keys = ON');
    migrateSqlite(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return new SqliteStore(db, options, path);
}
