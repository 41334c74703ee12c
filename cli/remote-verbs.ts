/**
 * API client verbs beyond listing and reading (cli/remote.ts holds the
 * others and the shared plumbing; the shapes both use are here): a job named
 * by id or name, saving and (de)activating jobs, deleting and renaming files,
 * and `execs log` with `-f`, which follows a running execution until it ends.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ClientError, type ApiClient } from './api-client.js';
import type { Io } from './io.js';

export type Row = Record<string, unknown>;

/** What every verb's handler gets: the client, the parsed arguments and where to print. */
export interface Call {
  readonly api: ApiClient;
  readonly flags: Map<string, string>;
  readonly positionals: readonly string[];
  readonly vars: readonly [string, string][];
  readonly json: boolean;
  readonly io: Io;
  /** The body as JSON with `-o json`, else the table `render` makes. */
  readonly show: (body: unknown, render: () => string) => void;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const JOB_ID = /^job_[a-z0-9]{16}$/;

/** The id of the job `ref` names: a `job_…` id as is, else the one job with that name. */
export async function jobId(api: ApiClient, ref: string): Promise<string> {
  if (JOB_ID.test(ref)) return ref;
  const { jobs } = (await api.post('/project/job/list', { name: ref })) as { jobs: Row[] };
  if (jobs.length === 1) return String(jobs[0]!.id);
  if (jobs.length === 0) throw new ClientError(`error: no job named "${ref}" (give its name or a job_… id; service jobs list shows them)`);
  throw new ClientError(`error: ${jobs.length} jobs are named "${ref}": ${jobs.map((j) => String(j.id)).join(', ')}; give the id`);
}

/** The execution record, or undefined when the project has none with that id. */
export async function findExecution(api: ApiClient, id: string): Promise<Row | undefined> {
  const { executions } = (await api.get('/execution/list', { filters: JSON.stringify({ exec_id: id }) })) as { executions: Row[] };
  return executions[0];
}

const active = (e: Row) => e.status === 'queued' || e.status === 'running';

/** The tasks or steps of an execution, filtered by the command's flags. */
async function logRecords({ api, flags }: Call, id: string, pipeline: boolean): Promise<Row[]> {
  if (pipeline) {
    const { steps } = (await api.post('/execution/pipeline-steps', { exec_id: id, ...(flags.has('step') ? { step_id: flags.get('step') } : {}) })) as { steps: Row[] };
    return steps.filter((r) => !flags.has('status') || r.status === flags.get('status'));
  }
  const { tasks } = (await api.post('/execution/replication-tasks', { exec_id: id, ...(flags.has('stream') ? { stream: flags.get('stream') } : {}), ...(flags.has('status') ? { status: flags.get('status') } : {}) })) as { tasks: Row[] };
  return tasks;
}

const banner = (r: Row) => `=== ${String(r.stream_name ?? r.step_id)} (status=${String(r.status)}) ===\n`;

/**
 * `service execs log`: a banner per task or step, then its output. With `-f`,
 * polls every second while the execution is queued or running and prints
 * each record's banner when it appears and its output as it grows; the
 * status is read before the records, so the last round holds everything.
 */
export async function execsLog(call: Call): Promise<number> {
  const { api, flags, positionals, json, io } = call;
  const id = positionals[0]!;
  let e = await findExecution(api, id);
  if (!e) throw new ClientError(`execution ${id} not found`);
  const pipeline = e.job_type === 'pipeline';
  if (!flags.has('follow')) {
    const body = await logRecords(call, id, pipeline);
    if (json) io.out(JSON.stringify(body) + '\n');
    else for (const r of body) io.out(`${banner(r)}${String(r.output ?? '')}`);
    return 0;
  }
  const printed = new Map<string, number>();
  for (;;) {
    const records = await logRecords(call, id, pipeline);
    if (!json) {
      records.forEach((r, i) => {
        const key = `${i}:${String(r.stream_name ?? r.step_id)}`;
        const output = String(r.output ?? '');
        const done = printed.get(key);
        if (done === undefined) io.out(banner(r));
        if (output.length > (done ?? 0)) io.out(output.slice(done ?? 0));
        printed.set(key, output.length);
      });
    }
    if (!active(e)) {
      if (json) io.out(JSON.stringify(records) + '\n');
      else io.out(`--- execution ${id} ended: ${String(e.status)}${e.error ? ` (${String(e.error)})` : ''}\n`);
      return e.status === 'success' || e.status === 'warning' ? 0 : 1;
    }
    await sleep(1000);
    e = (await findExecution(api, id)) ?? e;
  }
}

/** Read-only fields of a Job: dropped before a save, which is a full replace. */
const READ_ONLY = ['default', 'created', 'updated', 'executed', 'next_run'];
const input = (job: Row) => Object.fromEntries(Object.entries(job).filter(([k]) => !READ_ONLY.includes(k)));

/** `service jobs save [--from FILE]`: a job as JSON or YAML (`{job: …}` or the job itself); prints the saved job's id. */
export async function jobsSave({ api, flags, json, io }: Call): Promise<number> {
  const from = flags.get('from');
  let text: string;
  try {
    text = readFileSync(from === undefined || from === '-' ? 0 : from, 'utf8');
  } catch (err) {
    throw new ClientError(`error: cannot read ${from === undefined || from === '-' ? 'standard input' : from}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text); // YAML is a superset of JSON
  } catch (err) {
    throw new ClientError(`error: ${from ?? 'standard input'} is not JSON or YAML: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ClientError(`error: ${from ?? 'standard input'}: expected a job (a mapping)`);
  const job = 'job' in doc ? (doc as { job: unknown }).job : doc;
  const saved = (await api.post('/project/job/save', { job })) as Row;
  io.out(json ? JSON.stringify(saved) + '\n' : `Saved job ${String(saved.id)} (${String(saved.name)}, active=${String(saved.active)})\n`);
  return 0;
}

/** `service jobs activate|deactivate JOB`: the job saved again with `active` set. */
export async function jobsActivate({ api, positionals, json, io }: Call, on: boolean): Promise<number> {
  const id = await jobId(api, positionals[0]!);
  const job = (await api.get('/project/job/get', { job_id: id })) as Row;
  const saved = (await api.post('/project/job/save', { job: { ...input(job), active: on } })) as Row;
  io.out(json ? JSON.stringify(saved) + '\n' : `${on ? 'Activated' : 'Deactivated'} job ${id}${on && saved.next_run ? ` (next run ${String(saved.next_run)})` : ''}\n`);
  return 0;
}

/** `service files delete NAME` */
export async function filesDelete({ api, positionals, json, io }: Call): Promise<number> {
  const body = (await api.post('/project/file/delete', { name: positionals[0] })) as { name: string; deleted_job_ids: string[] };
  io.out(json ? JSON.stringify(body) + '\n' : `Deleted ${body.name}\n${body.deleted_job_ids.length > 0 ? `Deleted jobs: ${body.deleted_job_ids.join(', ')}\n` : ''}`);
  return 0;
}

/** `service files rename OLD NEW` */
export async function filesRename({ api, positionals, json, io }: Call): Promise<number> {
  const body = (await api.post('/project/file/rename', { old_name: positionals[0], new_name: positionals[1] })) as { file: Row; updated_job_ids: string[] };
  io.out(json ? JSON.stringify(body) + '\n' : `Renamed ${positionals[0]} to ${String(body.file.name)}\n${body.updated_job_ids.length > 0 ? `Updated jobs: ${body.updated_job_ids.join(', ')}\n` : ''}`);
  return 0;
}
