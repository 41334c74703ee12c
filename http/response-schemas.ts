/**
 * JSON Schemas of what each route answers with 200, published in
 * /openapi.json beside the request schemas. The API tests validate every
 * answer they get against the published document (test/helpers/api-server.ts),
 * so a response that drifts from its schema fails the suite.
 */
type JsonSchema = Record<string, unknown>;

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const time = { type: 'string', format: 'date-time' };
const nullable = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] });
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const obj = (properties: Record<string, JsonSchema>, required: readonly string[] = Object.keys(properties)): JsonSchema => ({ type: 'object', properties, required: [...required] });

const STATUS = { type: 'string', enum: ['queued', 'running', 'success', 'warning', 'error', 'skipped', 'cancelled', 'interrupted'] };

/** The resources of the API, as `components.schemas`. */
export const RESOURCE_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  File: obj({ name: str, body: str, encoding: { type: 'string', enum: ['base64'] }, is_dir: bool, updated: time, size: int }, ['name', 'is_dir', 'updated', 'size']),
  Connection: obj({ name: str, type: str, kind: { type: 'string', enum: ['database', 'file', 'unsupported'] }, source: { type: 'string', enum: ['project', 'host', 'env_var'] } }),
  Project: obj({ id: str, name: str, git: nullable({ type: 'object' }), counts: obj({ files: int, jobs: int, executions: int }) }),
  Job: obj(
    {
      id: str,
      name: str,
      type: { type: 'string', enum: ['replication', 'pipeline', 'monitor', 'query'] },
      file_name: str,
      description: str,
      active: bool,
      default: bool,
      streams: list(str),
      tags: list(str),
      schedules: list(str),
      timezone: str,
      policy: { type: 'string', enum: ['queue', 'skip', 'cancel'] },
      config: obj({ mode: nullable(str), threads: int, vars: { type: 'object' }, timeout: int, retries: int }),
      created: time,
      updated: time,
      executed: nullable(time),
      next_run: nullable(time),
    },
    ['id', 'name', 'type', 'file_name', 'active', 'default', 'policy', 'config', 'created', 'updated'],
  ),
  Execution: obj(
    {
      exec_id: str,
      job_id: str,
      job_name: str,
      job_type: str,
      file_name: str,
      status: STATUS,
      error: nullable(str),
      trigger: str,
      start_time: time,
      end_time: nullable(time),
      duration: nullable({ type: 'number' }),
      rows: nullable(int),
      bytes: nullable(int),
      status_map: { type: 'object', additionalProperties: int },
      build: nullable({ type: 'object' }),
      daemon: str,
      tree_version: int,
    },
    ['exec_id', 'job_id', 'job_name', 'job_type', 'file_name', 'status', 'error', 'trigger', 'start_time', 'end_time'],
  ),
  Task: obj(
    { exec_id: str, task_id: str, stream_name: str, object: nullable(str), mode: nullable(str), status: STATUS, error: nullable(str), start_time: nullable(time), end_time: nullable(time), rows: nullable(int), bytes: nullable(int), output: str, metrics: nullable({ type: 'object' }) },
    ['exec_id', 'task_id', 'stream_name', 'status', 'error'],
  ),
  Daemon: obj({
    id: str,
    host: str,
    pid: int,
    version: str,
    url: nullable(str),
    max_running: int,
    lease_ms: int,
    started: time,
    heartbeat: time,
    heartbeat_age_ms: int,
    state: { type: 'string', enum: ['alive', 'expired', 'stopped', 'fenced'] },
    fenced_by: nullable(str),
    running: list(str),
  }),
  Step: obj({ exec_id: str, step_id: str, type: str, status: STATUS, error: nullable(str), start_time: nullable(time), end_time: nullable(time), output: str, state: {} }, ['exec_id', 'step_id', 'type', 'status', 'error']),
};

/** The 200 answer of each route, by path. */
export const RESPONSE_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  '/health': obj({ status: { type: 'string', enum: ['ok'] }, version: str, store: obj({ reachable: bool, latency_ms: { type: 'number' } }) }, ['status', 'version']),
  '/openapi.json': obj({ openapi: str, info: { type: 'object' }, paths: { type: 'object' } }),
  '/project/get': ref('Project'),
  '/connection/list': obj({ connections: list(ref('Connection')) }),
  '/connection/test': obj({ valid: bool, error: str }, ['valid']),
  '/project/file/get': ref('File'),
  '/project/file/list': obj({ files: list(ref('File')) }),
  '/project/file/save': obj({ file: ref('File'), job_file_kind: str, default_job_id: str, warnings: list(str) }, ['file']),
  '/project/file/delete': obj({ name: str, deleted: { const: true }, deleted_job_ids: list(str) }),
  '/project/file/rename': obj({ file: ref('File'), updated_job_ids: list(str), default_job_id: str }, ['file', 'updated_job_ids']),
  '/project/job/list': obj({ jobs: list(ref('Job')) }),
  '/project/job/get': ref('Job'),
  '/project/job/save': ref('Job'),
  '/project/job/delete': obj({ job_id: str, deleted: { const: true } }),
  '/project/job/run': obj({ exec_id: str }),
  '/execution/list': obj({ executions: list(ref('Execution')) }),
  '/execution/cancel': obj({ exec_id: str, status: STATUS }),
  '/execution/replication-tasks': obj({ tasks: list(ref('Task')) }),
  '/execution/pipeline-steps': obj({ steps: list(ref('Step')) }),
  '/cluster': obj({ daemon: str, daemons: list(ref('Daemon')) }),
  '/project/git/pull': obj({ pulled: bool, sha: nullable(str), created: int, updated: int, deleted: int }, ['pulled']),
};
