/**
 * API client commands — message producers over HTTP:
 * `service jobs|execs|files|git …` and `service conns … --remote` (plain
 * `service conns` works on this machine's connections without a daemon;
 * with SERVICE_PLATFORM_HOST set or `--remote` it asks the daemon).
 * Output is a table, or the response body with `-o json`.
 */
import { readFileSync } from 'node:fs';
import { apiClient, ClientError } from './api-client.js';
import { EngineError } from '../engine/errors.js';
import { flagValue, flagValues, type ParsedArgs } from './parse-command-line.js';
import type { Io } from './io.js';
import { execsLog, filesDelete, filesRename, findExecution, jobId, jobsActivate, jobsSave, sleep, type Call, type Row } from './remote-verbs.js';

export function table(rows: readonly Row[], columns: readonly string[]): string {
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))));
  const head = columns.map((c) => c.toUpperCase());
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  return [head, ...cells].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

const readStdin = () => readFileSync(0);

const usage = (m: string) => new EngineError('usage', m);

/**
 * `--since`/`--until`: an RFC 3339 time, or a date (midnight UTC). Checked
 * here so a bad value is a usage error naming the flag, not the API's
 * `filters.period` complaint.
 */
function timeFlag(flag: 'since' | 'until', text: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))) return `${text}T00:00:00.000Z`;
  if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))) return text;
  throw usage(`invalid argument "${text}" for "--${flag}": expected an RFC 3339 time (2026-11-24T08:00:00Z) or a date (2026-11-24)`);
}

function keyValue(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw usage(`invalid argument "${text}" for "--var": expected K=V`);
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** A file's bytes as a save request body: text when it is valid UTF-8, else base64. */
function fileBody(bytes: Buffer): { body: string; encoding?: 'base64' } {
  try {
    return { body: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { body: bytes.toString('base64'), encoding: 'base64' };
  }
}

/** `service jobs list` */
async function jobsList({ api, flags, show }: Call): Promise<number> {
  const body = (await api.post('/project/job/list', { ...(flags.has('name') ? { name: flags.get('name') } : {}), ...(flags.has('file-name') ? { file_name: flags.get('file-name') } : {}), ...(flags.has('type') ? { type: flags.get('type') } : {}) })) as { jobs: Row[] };
  show(body, () => table(body.jobs.map((j) => ({ ...j, file: j.file_name })), ['id', 'name', 'type', 'file', 'active', 'default', 'executed', 'next_run']));
  return 0;
}

/** One record as `FIELD  VALUE` lines (nested values as JSON). */
function recordTable(r: Row): string {
  const rows = Object.entries(r).map(([k, v]) => ({ field: k, value: v !== null && typeof v === 'object' ? JSON.stringify(v) : v }));
  return table(rows, ['field', 'value']);
}

/** `service jobs get` (JSON by default, as before; `-o table` lists the fields) */
async function jobsGet({ api, positionals, json, io }: Call): Promise<number> {
  const body = (await api.get('/project/job/get', { job_id: await jobId(api, positionals[0]!) })) as Row;
  io.out(json ? JSON.stringify(body, null, 2) + '\n' : recordTable(body));
  return 0;
}

/** `service jobs run` (a job id or a job name) */
async function jobsRun({ api, flags, positionals, vars: varList, json, io }: Call): Promise<number> {
  const id = await jobId(api, positionals[0]!);
  const vars = Object.fromEntries(varList);
  const req = {
    job_id: id,
    ...(flags.has('streams') ? { streams: flags.get('streams')!.split(',') } : {}),
    ...(flags.has('mode') ? { mode: flags.get('mode') } : {}),
    ...(flags.has('select') ? { select: flags.get('select')!.split(',') } : {}),
    ...(Object.keys(vars).length ? { vars } : {}),
  };
  const started = (await api.post('/project/job/run', req, { 'Service-Trigger': 'manual' })) as Row & { exec_id: string };
  const { exec_id } = started;
  if (!flags.has('wait')) {
    io.out(json ? JSON.stringify({ job_id: id, ...started }) + '\n' : `Started job ${id} (exec_id=${exec_id})\n`);
    return 0;
  }
  if (!json) io.out(`Started job ${id} (exec_id=${exec_id})\n`);
  for (;;) {
    const e = await findExecution(api, exec_id);
    if (e && !['queued', 'running'].includes(String(e.status))) {
      // -o json: the finished execution record, one JSON value.
      io.out(json ? JSON.stringify(e) + '\n' : `status=${e.status} rows=${e.rows} bytes=${e.bytes} duration=${e.duration}s${e.error ? ` error=${e.error}` : ''}\n`);
      return e.status === 'success' || e.status === 'warning' ? 0 : 1;
    }
    await sleep(5000);
  }
}

/** `service execs list` */
async function execsList({ api, flags, show }: Call): Promise<number> {
  const filters: Row = {};
  if (flags.has('job-id')) filters.job_id = flags.get('job-id');
  if (flags.has('since') || flags.has('until')) filters.period = [flags.get('since') ?? '1970-01-01T00:00:00.000Z', flags.get('until') ?? '9999-12-31T23:59:59.999Z'];
  const body = (await api.get('/execution/list', { status: flags.get('status'), limit: flags.get('limit'), order: flags.has('asc') ? 'asc' : undefined, filters: Object.keys(filters).length ? JSON.stringify(filters) : undefined })) as { executions: Row[] };
  show(body, () => table(body.executions.map((e) => ({ ...e, job: e.job_name, start: e.start_time })), ['exec_id', 'job', 'status', 'start', 'duration', 'rows']));
  return 0;
}

/** `service execs get`: the record's fields as a table, or the record as JSON with `-o json` */
async function execsGet({ api, positionals, show }: Call): Promise<number> {
  const id = positionals[0]!;
  const e = await findExecution(api, id);
  if (!e) throw new ClientError(`execution ${id} not found`);
  show(e, () => recordTable(e));
  return 0;
}

/** `service execs cancel` */
async function execsCancel({ api, positionals, json, io }: Call): Promise<number> {
  const id = positionals[0];
  const body = await api.post('/execution/cancel', { exec_id: id });
  io.out(json ? JSON.stringify(body) + '\n' : `Cancelled ${id}\n`);
  return 0;
}

/** `service files list` */
async function filesList({ api, flags, show }: Call): Promise<number> {
  const body = (await api.post('/project/file/list', flags.has('prefix') ? { prefix: flags.get('prefix') } : {})) as { files: Row[] };
  show(body, () => table(body.files, ['name', 'size', 'updated']));
  return 0;
}

/** `service files get` */
async function filesGet({ api, positionals, json, io }: Call): Promise<number> {
  const body = (await api.get('/project/file/get', { name: positionals[0] })) as { body: string; encoding?: string };
  if (json) io.out(JSON.stringify(body) + '\n');
  else io.out(body.encoding === 'base64' ? Buffer.from(body.body, 'base64').toString('latin1') : body.body);
  return 0;
}

/** `service files save` */
async function filesSave({ api, flags, positionals, json, io }: Call): Promise<number> {
  const name = positionals[0];
  const from = flags.get('from');
  let bytes: Buffer;
  try {
    bytes = from === undefined || from === '-' ? readStdin() : readFileSync(from);
  } catch (err) {
    throw new ClientError(`error: cannot read ${from === undefined || from === '-' ? 'standard input' : from}: ${(err as Error).message}`);
  }
  const content = fileBody(bytes);
  try {
    const body = (await api.post('/project/file/save', { file: { name, ...content } })) as { file: Row; default_job_id?: string };
    if (json) {
      io.out(JSON.stringify(body) + '\n');
      return 0;
    }
    io.out(`Saved file ${name} (${String(body.file.size)} bytes)\n`);
    if (body.default_job_id) io.out(`Default job: ${body.default_job_id}\n`);
    return 0;
  } catch (err) {
    const problems = err instanceof ClientError ? (err.body?.problems as Row[] | undefined) : undefined;
    if (!problems) throw err;
    if (json) io.out(JSON.stringify(err instanceof ClientError ? err.body : {}) + '\n');
    else for (const pr of problems) io.err(`${name}:${String(pr.line ?? '')}:${String(pr.column ?? '')}: ${String(pr.path)}: ${String(pr.message)}\n`);
    return 1;
  }
}

/** `service conns list` */
async function connsList({ api, show }: Call): Promise<number> {
  const body = (await api.get('/connection/list')) as { connections: Row[] };
  show(body, () => table(body.connections, ['name', 'type', 'kind', 'source']));
  return 0;
}

/** `service conns test` */
async function connsTest({ api, positionals, json, io }: Call): Promise<number> {
  const name = positionals[0];
  const body = (await api.post('/connection/test', { name })) as { valid: boolean; error?: string };
  if (json) {
    io.out(JSON.stringify(body) + '\n');
    return body.valid ? 0 : 1;
  }
  if (body.valid) {
    io.out(`Connection ${name}: valid\n`);
    return 0;
  }
  io.err(`${body.error}\n`);
  return 1;
}

/** `service git pull` */
async function gitPull({ api, show }: Call): Promise<number> {
  const body = (await api.post('/project/git/pull', {})) as {
    pulled: boolean; sha: string; created: number; updated: number; deleted: number;
    created_files: Row[]; updated_files: Row[]; deleted_file_names: string[]; invalid_files: { name: string; problems: Row[] }[];
  };
  show(body, () => [
    `pulled=${body.pulled} sha=${body.sha} created=${body.created} updated=${body.updated} deleted=${body.deleted}\n`,
    ...body.created_files.map((f) => `created ${String(f.name)}\n`),
    ...body.updated_files.map((f) => `updated ${String(f.name)}\n`),
    ...body.deleted_file_names.map((n) => `deleted ${n}\n`),
    ...body.invalid_files.flatMap((f) => f.problems.map((pr) => `invalid ${f.name}:${String(pr.line ?? '')}:${String(pr.column ?? '')}: ${String(pr.path)}: ${String(pr.message)}\n`)),
  ].join(''));
  return 0;
}

const HANDLERS: Readonly<Record<string, (call: Call) => Promise<number>>> = {
  'jobs list': jobsList,
  'jobs get': jobsGet,
  'jobs run': jobsRun,
  'jobs save': jobsSave,
  'jobs activate': (c) => jobsActivate(c, true),
  'jobs deactivate': (c) => jobsActivate(c, false),
  'execs list': execsList,
  'execs get': execsGet,
  'execs log': execsLog,
  'execs cancel': execsCancel,
  'files list': filesList,
  'files get': filesGet,
  'files save': filesSave,
  'files delete': filesDelete,
  'files rename': filesRename,
  'conns list': connsList,
  'conns test': connsTest,
  'git pull': gitPull,
};

/** Runs API-client command `key` (`jobs list`, `conns test` …) with its parsed command line. */
export async function remoteCommand(key: string, a: ParsedArgs, io: Io): Promise<number> {
  const output = flagValue(a, 'output') ?? 'table';
  if (output !== 'table' && output !== 'json') throw usage(`invalid argument "${output}" for "-o": expected table or json`);
  const vars = flagValues(a, 'var').map(keyValue);
  const flags = new Map<string, string>();
  for (const [k, v] of a.values) flags.set(k, v.at(-1)!);
  for (const f of ['since', 'until'] as const) if (flags.has(f)) flags.set(f, timeFlag(f, flags.get(f)!));
  const json = output === 'json';
  const show = (body: unknown, render: () => string) => io.out(json ? JSON.stringify(body) + '\n' : render());
  try {
    const api = apiClient();
    return await HANDLERS[key]!({ api, flags, positionals: a.positionals, vars, json, io, show });
  } catch (err) {
    if (err instanceof ClientError) {
      io.err(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
