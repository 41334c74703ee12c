/**
 * Versioned schema migrations, run when a store is opened ("schema
 * migrations run at start"): one list for both backends, each migration one
 * schema definition whose statements take the backend's column types
 * (`types`) and leave out what one backend does not have (the cluster tables
 * on SQLite, the stored public JSON on PostgreSQL). Each is applied at most
 * once: `schema_version` records every applied version. Opening is safe
 * from several processes at once — SQLite takes the write lock first (BEGIN
 * IMMEDIATE), PostgreSQL a transaction-scoped advisory lock — and a store
 * written by a newer release (a version this code does not know) is refused
 * rather than guessed at.
 *
 * Column choices: times, ids and file names are text compared in byte order
 * (SQLite BINARY; PostgreSQL COLLATE "C", because the database's default
 * collation would sort the base62 KSUIDs case-insensitively). JSON values are
 * text in both backends so objects keep their key order.
 */
import { EngineError } from '../errors.js';
import { changes, exec, row, rows, type DialectName, type Work } from './sql-dialect.js';
import { EXECUTION_JSON_SOURCES, PUBLIC_JSON } from './sqlite-execution-page.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  statements(d: DialectName): string[];
}

const STATUS_CHECK = `IN ('queued', 'running', 'success', 'error', 'warning', 'skipped', 'cancelled', 'interrupted')`;

function types(d: DialectName) {
  return d === 'postgres'
    ? { key: 'TEXT COLLATE "C"', bool: 'BOOLEAN', big: 'BIGINT', no: 'false' }
    : { key: 'TEXT', bool: 'INTEGER', big: 'INTEGER', no: '0' };
}

/** Per-record output chunks: an append is one small INSERT instead of rewriting a growing text value. */
function outputTable(d: DialectName, table: string, owner: string, idColumn: string): string {
  const { key } = types(d);
  return `CREATE TABLE ${table} (
    exec_id ${key} NOT NULL,
    ${idColumn} ${key} NOT NULL,
    n INTEGER NOT NULL,
    chunk TEXT NOT NULL,
    PRIMARY KEY (exec_id, ${idColumn}, n),
    FOREIGN KEY (exec_id, ${idColumn}) REFERENCES ${owner} (exec_id, ${idColumn})
  )`;
}

const initial: Migration = {
  version: 1,
  name: 'projects, tokens, jobs, executions, tasks, steps, outputs, build watermarks',
  statements(d) {
    const { key, bool, big, no } = types(d);
    const outputCounters = `output_bytes ${big} NOT NULL DEFAULT 0,
      output_chunks INTEGER NOT NULL DEFAULT 0,
      output_truncated ${bool} NOT NULL DEFAULT ${no}`;
    return [
      // Same DDL as the build's watermarks.ts always used, so stores it created migrate in place.
      'CREATE TABLE IF NOT EXISTS service_build_watermarks (target TEXT NOT NULL, model TEXT NOT NULL, value TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (target, model))',
      `CREATE TABLE projects (
        id ${key} PRIMARY KEY,
        name ${key} NOT NULL UNIQUE,
        git_url TEXT,
        git_branch TEXT,
        git_enabled ${bool},
        git_poll_interval INTEGER,
        git_last_sha TEXT,
        git_last_pull ${key},
        git_last_error TEXT,
        created ${key} NOT NULL
      )`,
      `CREATE TABLE tokens (
        digest ${key} PRIMARY KEY,
        project_id ${key} NOT NULL REFERENCES projects (id),
        label TEXT NOT NULL,
        created ${key} NOT NULL
      )`,
      'CREATE INDEX tokens_project ON tokens (project_id)',
      `CREATE TABLE jobs (
        id ${key} PRIMARY KEY,
        project_id ${key} NOT NULL REFERENCES projects (id),
        name TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('replication', 'pipeline', 'monitor', 'query')),
        file_name ${key} NOT NULL,
        description TEXT NOT NULL,
        active ${bool} NOT NULL,
        is_default ${bool} NOT NULL,
        streams TEXT NOT NULL,
        tags TEXT NOT NULL,
        schedules TEXT NOT NULL,
        timezone TEXT NOT NULL,
        policy TEXT NOT NULL CHECK (policy IN ('queue', 'skip', 'cancel')),
        config TEXT NOT NULL,
        created ${key} NOT NULL,
        updated ${key} NOT NULL
      )`,
      'CREATE INDEX jobs_project_created ON jobs (project_id, created, id)',
      'CREATE INDEX jobs_project_file ON jobs (project_id, file_name)',
      // job_id has no foreign key: executions outlive their job.
      `CREATE TABLE executions (
        exec_id ${key} PRIMARY KEY,
        project_id ${key} NOT NULL REFERENCES projects (id),
        job_id ${key} NOT NULL,
        job_name TEXT NOT NULL,
        job_type TEXT NOT NULL,
        file_name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status ${STATUS_CHECK}),
        error TEXT,
        triggered_by TEXT NOT NULL CHECK (triggered_by IN ('manual', 'api', 'schedule', 'git')),
        start_time ${key} NOT NULL,
        end_time ${key},
        row_count ${big} NOT NULL DEFAULT 0,
        byte_count ${big} NOT NULL DEFAULT 0,
        build TEXT,
        overrides TEXT,
        claimed_by TEXT
      )`,
      // The three listing shapes of /execution/list, each ordered like the result.
      'CREATE INDEX executions_project_start ON executions (project_id, start_time, exec_id)',
      'CREATE INDEX executions_project_job ON executions (project_id, job_id, start_time, exec_id)',
      'CREATE INDEX executions_project_status ON executions (project_id, status, start_time, exec_id)',
      // A job's `executed`.
      'CREATE INDEX executions_job_start ON executions (job_id, start_time)',
      // Dispatch and recovery read the few active rows in exec_id order.
      'CREATE INDEX executions_status ON executions (status, exec_id)',
      // Never two running executions of one job, whatever the number of daemons.
      "CREATE UNIQUE INDEX executions_one_running_per_job ON executions (job_id) WHERE status = 'running'",
      `CREATE TABLE tasks (
        exec_id ${key} NOT NULL REFERENCES executions (exec_id),
        task_id ${key} NOT NULL,
        seq INTEGER NOT NULL,
        stream_name TEXT NOT NULL,
        object TEXT,
        mode TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status ${STATUS_CHECK}),
        error TEXT,
        start_time ${key},
        end_time ${key},
        row_count ${big} NOT NULL DEFAULT 0,
        byte_count ${big} NOT NULL DEFAULT 0,
        metrics TEXT,
        ${outputCounters},
        PRIMARY KEY (exec_id, task_id)
      )`,
      outputTable(d, 'task_output', 'tasks', 'task_id'),
      `CREATE TABLE steps (
        exec_id ${key} NOT NULL REFERENCES executions (exec_id),
        step_id ${key} NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status ${STATUS_CHECK}),
        error TEXT,
        start_time ${key},
        end_time ${key},
        state TEXT,
        ${outputCounters},
        PRIMARY KEY (exec_id, step_id)
      )`,
      outputTable(d, 'step_output', 'steps', 'step_id'),
    ];
  },
};

/**
 * Cluster mode (docs/cluster.md): what several daemons sharing one PostgreSQL
 * store coordinate through. SQLite records the version and changes nothing —
 * a SQLite store belongs to one daemon.
 * - `daemons`: one row per daemon process, its heartbeat in the database's
 *   own clock (so daemons' clocks never get compared), and `fenced_by` once a
 *   survivor took its executions over;
 * - executions get `attempt` (claims so far) and `tree_version` (the project
 *   files it ran on);
 * - `schedule_claims`: one row per (job, due time), the exactly-once key;
 * - `project_trees` / `project_files`: the project files as the cluster's
 *   source of truth, each row stamped with the tree version that last changed
 *   it (deletions stay as `deleted` rows so a daemon catching up sees them);
 * - `operator_tokens`: digests of the tokens `GET /cluster` accepts;
 * - a trigger refusing writes to execution records from the session of a
 *   daemon that was fenced (each daemon's sessions carry `service.daemon`).
 */
const cluster: Migration = {
  version: 2,
  name: 'cluster mode: daemons, leases, schedule claims, shared project files, operator tokens',
  statements(d) {
    if (d === 'sqlite') return [];
    const { key } = types(d);
    const fenced = ['executions', 'tasks', 'steps', 'task_output', 'step_output'];
    return [
      'ALTER TABLE executions ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0',
      'ALTER TABLE executions ADD COLUMN tree_version BIGINT',
      'CREATE INDEX executions_claimed_running ON executions (claimed_by) WHERE status = \'running\'',
      `CREATE TABLE daemons (
        id ${key} PRIMARY KEY,
        node ${key} NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        version TEXT NOT NULL,
        url TEXT,
        max_running INTEGER NOT NULL,
        lease_ms INTEGER NOT NULL,
        started TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        heartbeat TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        stopped TIMESTAMPTZ,
        fenced_by TEXT,
        fenced_at TIMESTAMPTZ
      )`,
      `CREATE TABLE schedule_claims (
        job_id ${key} NOT NULL,
        due_time ${key} NOT NULL,
        daemon TEXT NOT NULL,
        exec_id TEXT,
        claimed TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (job_id, due_time)
      )`,
      `CREATE TABLE project_trees (
        project_id ${key} PRIMARY KEY REFERENCES projects (id),
        version BIGINT NOT NULL,
        changed TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        changed_by TEXT NOT NULL,
        change TEXT NOT NULL
      )`,
      `CREATE TABLE project_files (
        project_id ${key} NOT NULL REFERENCES projects (id),
        path ${key} NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('file', 'dir', 'deleted')),
        content BYTEA,
        digest TEXT,
        version BIGINT NOT NULL,
        PRIMARY KEY (project_id, path)
      )`,
      'CREATE INDEX project_files_version ON project_files (project_id, version)',
      `CREATE TABLE operator_tokens (digest ${key} PRIMARY KEY, label TEXT NOT NULL, created TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
      `CREATE FUNCTION service_fence() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE d text := current_setting('service.daemon', true);
       BEGIN
         IF d IS NOT NULL AND d <> '' AND EXISTS (SELECT 1 FROM daemons WHERE id = d AND fenced_by IS NOT NULL) THEN
           RAISE EXCEPTION 'daemon % lost its lease and was taken over by %: its writes are refused', d,
             (SELECT fenced_by FROM daemons WHERE id = d) USING ERRCODE = 'SV001';
         END IF;
         RETURN NEW;
       END $$`,
      ...fenced.map((t) => `CREATE TRIGGER ${t}_fence BEFORE INSERT OR UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION service_fence()`),
    ];
  },
};

/**
 * SQLite: the public JSON of every terminal execution (what `GET
 * /execution/list` shows, sqlite-execution-page.ts) stored in the row, so a
 * page of finished executions reads one text per row instead of building it
 * from ~15 values, two time parses and two status-map probes each (≈3–5 µs
 * per row on the 2-core dev machine; reading the stored text ≈0.6 µs).
 * Triggers keep it exact whatever writes: an execution that is (or stays)
 * terminal after an INSERT or UPDATE of its columns gets it recomputed; an
 * active one has none; a task or step inserted, deleted or changing status
 * drops its execution's (the status map changed; the page then builds it
 * when read). Recomputing there instead made closing an execution's open
 * tasks quadratic (each close recounted all of them: 2,000 tasks took 3 s);
 * the store recomputes once after it closes them (closeOpen in
 * execution-work.ts, through the SQLite backend's afterClose).
 * Rows from before this migration keep NULL and are built when read.
 * PostgreSQL records the version and changes nothing (its pages are built
 * in JavaScript).
 */
const storedJson: Migration = {
  version: 3,
  name: 'stored public JSON of terminal executions (SQLite)',
  statements(d) {
    if (d === 'postgres') return [];
    const active = "('queued', 'running')";
    const columns = EXECUTION_JSON_SOURCES.join(', ');
    const refresh = (where: string) => `UPDATE executions AS e SET public_json = ${PUBLIC_JSON} WHERE ${where} AND status NOT IN ${active}`;
    const drop = (ids: string) => `UPDATE executions SET public_json = NULL WHERE exec_id IN (${ids}) AND public_json IS NOT NULL`;
    const byRecord = (table: string) => [
      `CREATE TRIGGER ${table}_insert_public_json AFTER INSERT ON ${table} BEGIN ${drop('NEW.exec_id')}; END`,
      `CREATE TRIGGER ${table}_status_public_json AFTER UPDATE OF exec_id, status ON ${table} BEGIN ${drop('NEW.exec_id, OLD.exec_id')}; END`,
      `CREATE TRIGGER ${table}_delete_public_json AFTER DELETE ON ${table} BEGIN ${drop('OLD.exec_id')}; END`,
    ];
    return [
      'ALTER TABLE executions ADD COLUMN public_json TEXT',
      `CREATE TRIGGER executions_insert_public_json AFTER INSERT ON executions WHEN NEW.status NOT IN ${active} BEGIN ${refresh('e.rowid = NEW.rowid')}; END`,
      `CREATE TRIGGER executions_update_public_json AFTER UPDATE OF ${columns} ON executions BEGIN
         ${refresh('e.rowid = NEW.rowid')};
         UPDATE executions SET public_json = NULL WHERE rowid = NEW.rowid AND status IN ${active} AND public_json IS NOT NULL;
       END`,
      ...byRecord('tasks'),
      ...byRecord('steps'),
    ];
  },
};

/** In version order; append new migrations, never edit an applied one. */
export const MIGRATIONS: readonly Migration[] = [initial, cluster, storedJson];
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

const VERSION_TABLE = 'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)';

/** Any constant shared by every daemon on the database: serialises concurrent migrations. */
const MIGRATION_LOCK = 7_350_211_001;

/**
 * Applies the pending migrations; returns the schema version. Run as one
 * write transaction (Dialect.write): SQLite's IMMEDIATE transaction holds the
 * file's write lock from its start, PostgreSQL takes a transaction-scoped
 * advisory lock first.
 */
export function* migrate(d: DialectName): Work<number> {
  if (d === 'postgres') yield* rows('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  yield* exec(VERSION_TABLE);
  const current = Number((yield* row('SELECT MAX(version) AS v FROM schema_version'))?.v ?? 0);
  if (current > LATEST_VERSION) {
    throw new EngineError('internal', `state store schema version ${current} is newer than this service supports (${LATEST_VERSION}); upgrade the service`);
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    for (const sql of m.statements(d)) yield* exec(sql);
    yield* changes('INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
  }
  return LATEST_VERSION;
}
