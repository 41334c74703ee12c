/**
 * The daemon's state store (daemon state): projects, token
 * digests, jobs, executions with their task and step records and logs, and
 * build watermarks, behind one interface with one implementation
 * (`sql-store.ts`) over two backends — SQLite (the embedded default,
 * `sqlite-store.ts`) and PostgreSQL (several daemons sharing one state,
 * `postgres-store.ts`). `openStateStore` in `open-state-store.ts` picks one
 * from a location and runs the migrations.
 *
 * Records mirror the HTTP resources with snake_case fields so
 * the HTTP layer renders them with little mapping. A few internal fields are
 * not part of the HTTP shapes and are named as such below (`project_id`,
 * `seq`, `overrides`); the HTTP layer drops them.
 *
 * Timestamps are RFC 3339 UTC strings with milliseconds
 * (`2025-03-01T02:00:00.000Z`). Stored as text in exactly that form they
 * sort correctly as strings (PostgreSQL columns use COLLATE "C"); inputs in
 * another RFC 3339 form are normalised on the way in.
 *
 * Execution lifecycle, as the store enforces it:
 *   queued ──claim──► running ──► success | warning | error | skipped | cancelled | interrupted
 *   queued ──────────────────────► cancelled | skipped
 * - A terminal execution never changes again: every UPDATE carries
 *   `status IN ('queued','running')` in its WHERE clause.
 * - At most one execution per job is `running`: a partial unique index on
 *   executions(job_id) WHERE status = 'running' backs the dispatch rule.
 * - When an execution becomes terminal, its tasks/steps still queued or
 *   running take its status if that is cancelled or interrupted, else
 *   cancelled — in the same transaction.
 * - Tasks and steps are immutable once terminal too, so a result that arrives
 *   after a cancel is dropped by the store (retries must keep a task running
 *   until its last attempt ends). Output can still be appended to them.
 *
 * Monitor baselines need no table of their own: the baseline is the
 * job's last success or warning execution — listExecutions({jobId, status:
 * ['success', 'warning'], order: 'desc', limit: 1}) — and its tasks' metrics.
 */

export const EXECUTION_STATUSES = ['queued', 'running', 'success', 'error', 'warning', 'skipped', 'cancelled', 'interrupted'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const ACTIVE_STATUSES: readonly ExecutionStatus[] = ['queued', 'running'];
export const isTerminalStatus = (s: ExecutionStatus): boolean => s !== 'queued' && s !== 'running';

export type JobType = 'replication' | 'pipeline' | 'monitor' | 'query';
export type JobPolicy = 'queue' | 'skip' | 'cancel';
export type Trigger = 'manual' | 'api' | 'schedule' | 'git';
export type StatusMap = Record<ExecutionStatus, number>;
export type JsonObject = Record<string, unknown>;

/** `git`, as stored (the URL unredacted; the HTTP layer redacts it). */
export interface GitRecord {
  readonly url: string;
  readonly branch: string;
  readonly enabled: boolean;
  readonly poll_interval: number;
  readonly last_sha: string | null;
  readonly last_pull: string | null;
  readonly last_error: string | null;
}

export interface ProjectRecord {
  readonly id: string;
  readonly name: string;
  readonly git: GitRecord | null;
  readonly created: string;
}

export interface JobConfig {
  readonly mode: string | null;
  readonly threads: number;
  readonly vars: JsonObject;
  readonly timeout: number;
  readonly retries: number;
}

/** Without the computed `executed` (see latestStartTime) and `next_run`. */
export interface JobRecord {
  readonly id: string;
  readonly project_id: string;
  readonly name: string;
  readonly type: JobType;
  readonly file_name: string;
  readonly description: string;
  readonly active: boolean;
  readonly default: boolean;
  readonly streams: readonly string[];
  readonly tags: readonly string[];
  readonly schedules: readonly string[];
  readonly timezone: string;
  readonly policy: JobPolicy;
  readonly config: JobConfig;
  readonly created: string;
  readonly updated: string;
}

/** What createJob takes: a job without id and times (both made when absent). */
export type NewJob = Omit<JobRecord, 'id' | 'created' | 'updated'> & { readonly id?: string; readonly created?: string; readonly updated?: string };

/** Plus `project_id` and `overrides`. */
export interface ExecutionRecord {
  readonly exec_id: string;
  readonly project_id: string;
  readonly job_id: string;
  readonly job_name: string;
  readonly job_type: JobType;
  readonly file_name: string;
  readonly status: ExecutionStatus;
  readonly error: string | null;
  readonly trigger: Trigger;
  readonly start_time: string;
  readonly end_time: string | null;
  /** Seconds from start_time to end_time; null while active. */
  readonly duration: number | null;
  readonly rows: number;
  readonly bytes: number;
  /** Count of the execution's tasks (or steps) per status; all eight keys present. */
  readonly status_map: StatusMap;
  readonly build: JsonObject | null;
  /** Internal: the run request's overrides, kept so a queued execution can start after a restart. */
  readonly overrides: JsonObject | null;
  /** Cluster mode (PostgreSQL): the daemon that claimed it; absent before a claim and with SQLite. */
  readonly daemon?: string;
  /** Cluster mode: the version of the project files it ran on, once recorded. */
  readonly tree_version?: number;
}

export interface NewExecution {
  /** A fresh KSUID when absent. */
  readonly exec_id?: string;
  readonly project_id: string;
  readonly job_id: string;
  readonly job_name: string;
  readonly job_type: JobType;
  readonly file_name: string;
  /** `queued` (default) or, for policy skip, `skipped`; other statuses for imports and benches. */
  readonly status?: ExecutionStatus;
  readonly error?: string | null;
  readonly trigger: Trigger;
  readonly start_time: string;
  readonly end_time?: string | null;
  readonly rows?: number;
  readonly bytes?: number;
  readonly build?: JsonObject | null;
  readonly overrides?: JsonObject | null;
}

/** Fields updateExecution may change; absent = unchanged, null = cleared. */
export interface ExecutionPatch {
  readonly status?: ExecutionStatus;
  readonly error?: string | null;
  readonly end_time?: string | null;
  readonly rows?: number;
  readonly bytes?: number;
  readonly build?: JsonObject | null;
}

/** Plus `seq` (task order: n of `task_<n>`). `output` is absent when excluded. */
export interface TaskRecord {
  readonly exec_id: string;
  readonly task_id: string;
  readonly seq: number;
  readonly stream_name: string;
  readonly object: string | null;
  readonly mode: string;
  readonly status: ExecutionStatus;
  readonly error: string | null;
  readonly start_time: string | null;
  readonly end_time: string | null;
  readonly rows: number;
  readonly bytes: number;
  readonly output?: string;
  readonly metrics: JsonObject | null;
}

/**
 * Creates a task or changes it. The fields named in the type are required so
 * the first call can create the record; optional ones left out keep their
 * stored value (or the default on creation). A terminal task is not changed.
 */
export interface TaskUpsert {
  readonly exec_id: string;
  readonly task_id: string;
  /** Defaults to n of `task_<n>`, else one past the execution's last task. */
  readonly seq?: number;
  readonly stream_name: string;
  readonly object?: string | null;
  readonly mode: string;
  readonly status: ExecutionStatus;
  readonly error?: string | null;
  readonly start_time?: string | null;
  readonly end_time?: string | null;
  readonly rows?: number;
  readonly bytes?: number;
  readonly metrics?: JsonObject | null;
}

/** Plus `seq` (start order). Execution totals over steps are set by the caller. */
export interface StepRecord {
  readonly exec_id: string;
  readonly step_id: string;
  readonly seq: number;
  readonly type: string;
  readonly status: ExecutionStatus;
  readonly error: string | null;
  readonly start_time: string | null;
  readonly end_time: string | null;
  readonly output?: string;
  readonly state: JsonObject | null;
}

/** As TaskUpsert; a new step's seq is one past the execution's last step (start order). */
export interface StepUpsert {
  readonly exec_id: string;
  readonly step_id: string;
  readonly type: string;
  readonly status: ExecutionStatus;
  readonly error?: string | null;
  readonly start_time?: string | null;
  readonly end_time?: string | null;
  readonly state?: JsonObject | null;
}

export interface ExecutionQuery {
  readonly projectId: string;
  readonly execId?: string;
  readonly jobId?: string;
  /** One status, or several (e.g. success and warning for a monitor baseline). */
  readonly status?: ExecutionStatus | readonly ExecutionStatus[];
  /** `start <= start_time < end`. */
  readonly period?: readonly [string, string];
  /** By start_time, ties by exec_id. */
  readonly order: 'asc' | 'desc';
  readonly limit: number;
  /**
   * Keyset paging: only executions after this one in `order` (strictly past
   * its `(start_time, exec_id)`), so page n costs what page 1 costs.
   */
  readonly after?: { readonly start_time: string; readonly exec_id: string };
}

export interface ClaimOptions {
  /** Claim nothing when this many executions (of `owner`, when given) are running. */
  readonly maxRunning?: number;
  /** Recorded on the claimed execution; scopes maxRunning and markRunningInterrupted. */
  readonly owner?: string;
}

/** A stored token as `service token list` shows it: never the token itself. */
export interface TokenInfo {
  /** The first 12 hex digits of the digest: names the token for `service token revoke`. */
  readonly id: string;
  readonly digest: string;
  readonly project_id: string;
  readonly label: string;
  readonly created: string;
}

export interface ProjectCounts {
  readonly jobs: number;
  readonly executions: number;
}

export interface Watermark {
  readonly value: string;
  readonly updatedAt: string;
}

export interface StateStoreOptions {
  /** Stored output per task or step before `[output truncated]` (10 MiB). */
  readonly outputCapBytes?: number;
  /** PostgreSQL pool size (default 10). */
  readonly poolMax?: number;
  /**
   * SQLite `synchronous` (default `normal`): in WAL mode a commit costs ≈35 µs
   * with `normal` against ≈170 µs with `full` (an fsync each) on the 2-core
   * dev machine. `normal` survives a process crash; a power loss can drop the
   * last commits, which restart recovery then treats like a crash.
   */
  readonly synchronous?: 'normal' | 'full';
  /**
   * PostgreSQL: the daemon these sessions write for (`service.daemon`); once
   * another daemon takes that one over, its writes to execution records are
   * refused (docs/cluster.md, "Leases and fencing"). A-Z, a-z, 0-9, `-`, `.` only.
   */
  readonly daemonId?: string;
  /**
   * SQLite: threads with their own read-only connections that run the page
   * reads (listExecutionsJson), so that SQLite's work on them does not hold
   * the caller's event loop; 0 (default) runs them on the store's connection.
   * Ignored for `:memory:` and PostgreSQL.
   */
  readonly readerThreads?: number;
}

export const DEFAULT_OUTPUT_CAP_BYTES = 10 * 1024 * 1024;
export const OUTPUT_TRUNCATED_LINE = '[output truncated]';

export interface StateStore {
  readonly kind: 'sqlite' | 'postgres';

  // projects
  /** EngineError `conflict` `project name "<name>" is already taken` on a taken name. */
  createProject(input: { name: string; git?: GitRecord | null; id?: string; created?: string }): Promise<ProjectRecord>;
  /**
   * Changes the given git fields (absent = unchanged) and returns the project;
   * `null` removes git. Setting fields on a project without git needs `url`.
   * Undefined for an unknown project.
   */
  updateProjectGit(projectId: string, patch: Partial<GitRecord> | null): Promise<ProjectRecord | undefined>;
  getProject(projectId: string): Promise<ProjectRecord | undefined>;
  getProjectByName(name: string): Promise<ProjectRecord | undefined>;
  /** Sorted by name. */
  listProjects(): Promise<ProjectRecord[]>;
  projectCounts(projectId: string): Promise<ProjectCounts>;

  // tokens
  /** Stores a token's SHA-256 digest (64 lowercase hex) for a project. */
  addToken(projectId: string, digest: string, label?: string, created?: string): Promise<void>;
  /** The project a digest belongs to; digests are compared with timingSafeEqual. */
  projectIdForToken(digest: string): Promise<string | undefined>;
  /** Every stored token, oldest first. */
  listTokens(): Promise<TokenInfo[]>;
  /** Removes the token with that digest; false when there is none. Refused from then on. */
  revokeToken(digest: string): Promise<boolean>;
  /**
   * Removes a project with its tokens, jobs and executions (and, on
   * PostgreSQL, its shared files and schedule claims). False when unknown;
   * EngineError `conflict` while one of its executions is queued or running.
   */
  deleteProject(projectId: string): Promise<boolean>;

  // jobs
  createJob(job: NewJob): Promise<JobRecord>;
  /** Full replace of a job of that project; `created` is kept, `updated` set. Undefined when unknown. */
  replaceJob(job: Omit<JobRecord, 'created' | 'updated'> & { updated?: string }): Promise<JobRecord | undefined>;
  /** False when unknown; EngineError `conflict` `job <id> has active executions` when it has one. */
  deleteJob(projectId: string, jobId: string): Promise<boolean>;
  getJob(projectId: string, jobId: string): Promise<JobRecord | undefined>;
  /** Exact-match filters (AND), sorted by created then id. */
  listJobs(projectId: string, filter?: { name?: string; file_name?: string; type?: JobType }): Promise<JobRecord[]>;
  /** Jobs whose file is `path` or lies under the directory `path` (with or without trailing `/`). */
  jobsByFile(projectId: string, path: string): Promise<JobRecord[]>;
  /** start_time of the job's latest execution (a Job's `executed`), or null. */
  latestStartTime(jobId: string): Promise<string | null>;
  /** latestStartTime for many jobs in one query; jobs without executions are absent. */
  latestStartTimes(jobIds: readonly string[]): Promise<Map<string, string>>;

  // executions
  /**
   * `scheduleDue` (cluster mode): the execution is what the schedule claim of
   * (its job, that due time) became — recorded on the claim in the same
   * statement, so no daemon can die between the two and leave a claim that a
   * survivor would fire again. Stores without schedule claims (SQLite: one
   * daemon) ignore it.
   */
  createExecution(input: NewExecution, options?: { readonly scheduleDue?: string }): Promise<ExecutionRecord>;
  /** Bench/test helper: inserts many executions in one transaction (no status_map work). */
  insertExecutionsBulk(inputs: readonly NewExecution[]): Promise<void>;
  getExecution(projectId: string, execId: string): Promise<ExecutionRecord | undefined>;
  /** For the runtime, which works by exec id alone; request handlers use getExecution. */
  findExecution(execId: string): Promise<ExecutionRecord | undefined>;
  listExecutions(query: ExecutionQuery): Promise<ExecutionRecord[]>;
  /**
   * listExecutions as the UTF-8 JSON text of an array of the executions in
   * their public shape (public-execution.ts: what `GET /execution/list`
   * answers), byte for byte JSON.stringify's. SQLite builds the text in SQL
   * (a terminal execution's is stored in its row), on a reader thread when
   * the store has them (`readerThreads`).
   */
  listExecutionsJson(query: ExecutionQuery): Promise<Buffer>;
  /**
   * A token that changes whenever a committed change may have altered what
   * the store's reads return: any write of this store at once, and any
   * commit by another connection or process by the next turn of the event
   * loop (SQLite reads that half once per turn). Read it *before* a read: while a later
   * call returns the same token, that read's result is still current, so a
   * caller may reuse it. Undefined when the backend cannot tell cheaply
   * (PostgreSQL: other daemons write without telling this one), or inside an
   * open transaction; then nothing may be reused.
   */
  changeToken(): string | undefined;
  /**
   * Applies a patch to an active execution; false when it is unknown or
   * already terminal (nothing changes then). EngineError `conflict` when
   * setting `running` while the job has another running execution.
   */
  updateExecution(execId: string, patch: ExecutionPatch): Promise<boolean>;
  /** The job's queued and running executions, oldest first. */
  activeExecutions(jobId: string): Promise<ExecutionRecord[]>;
  /**
   * Marks the oldest queued execution (exec_id order) whose job has no running
   * execution as running and returns it; undefined when none qualifies or
   * maxRunning is reached.
   */
  claimNextQueued(options?: ClaimOptions): Promise<ExecutionRecord | undefined>;
  /** Running executions (of `owner`, when given) and their open tasks/steps → interrupted. Returns their ids. */
  markRunningInterrupted(now: string, error: string, owner?: string): Promise<string[]>;
  /** Tasks and steps of the execution still queued or running → `status` with end_time `now`. Returns how many. */
  finishActive(execId: string, status: ExecutionStatus, now: string): Promise<number>;

  // tasks and steps
  /** False when the task exists and is terminal (nothing changes then). */
  upsertTask(task: TaskUpsert): Promise<boolean>;
  /** Several upserts in one transaction (e.g. all tasks of an execution created queued). */
  upsertTasks(tasks: readonly TaskUpsert[]): Promise<void>;
  upsertStep(step: StepUpsert): Promise<boolean>;
  /**
   * Appends to a task's output, up to the output cap; the append that crosses
   * it keeps what fits and adds one `[output truncated]` line, later ones are
   * dropped. EngineError `internal` for an unknown task.
   */
  appendTaskOutput(execId: string, taskId: string, text: string): Promise<void>;
  appendStepOutput(execId: string, stepId: string, text: string): Promise<void>;
  /** In task order. `stream` is an exact match on stream_name. */
  listTasks(execId: string, filter?: { status?: ExecutionStatus; stream?: string; excludeOutput?: boolean }): Promise<TaskRecord[]>;
  /** In start order; `stepIdPrefix` matches exactly or followed by `.` or `[`. */
  listSteps(execId: string, filter?: { stepIdPrefix?: string; excludeOutput?: boolean }): Promise<StepRecord[]>;

  // build watermarks (SERVICE_STATE; table service_build_watermarks)
  getWatermark(target: string, model: string): Promise<Watermark | undefined>;
  setWatermark(target: string, model: string, value: string, now?: string): Promise<void>;

  /**
   * A cheap read of the executions table within `timeoutMs`, for health
   * checks: resolves the milliseconds it took; rejects with EngineError
   * `connection` when the store could not be read in time (unreachable, or
   * the table locked by someone else). Never waits longer than `timeoutMs`.
   */
  ping(timeoutMs: number): Promise<number>;

  close(): Promise<void>;
}
