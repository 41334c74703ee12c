/**
 * Jobs of a project: list, get, save with the rules of
 * save, delete, and run requests with the override rules. A job
 * save reads its file's kind under the project lock, so a concurrent file
 * save cannot change the kind between the check and the write.
 */
import { EngineError } from '../errors.js';
import { streamMatches, type JobFile, type PipelineStep } from '../jobs/index.js';
import type { JobRecord, JobType, Trigger } from '../state/store.js';
import { jobFileSizeProblem, readContent, kindLabel, type FileKind } from './job-files.js';
import { checkMode, checkVars, jobFields, jobType, modeApplies, type JobInput } from './job-input.js';
import { jobViews, type JobView } from './job-view.js';
import { badRequest, conflict, ForbiddenError, InvalidJobFileError, jobNotFound } from './project-errors.js';
import { validateForSave, type ProjectScope } from './project-scope.js';

/** Overrides, as ExecutionService.requestRun takes them. */
export interface RunOverrides {
  readonly streams?: readonly string[];
  readonly mode?: string;
  readonly select?: readonly string[];
  readonly vars?: Readonly<Record<string, unknown>>;
}

export interface RunRequest extends RunOverrides {
  readonly job_id: string;
}

/** Creates the execution and applies the policy; the daemon's ExecutionService. */
export interface RunRequester {
  requestRun(job: JobRecord, overrides: RunOverrides, trigger: Trigger): Promise<string>;
}

export interface JobFilter {
  readonly name?: string;
  readonly file_name?: string;
  readonly type?: string;
}

const quote = (s: string): string => JSON.stringify(s);

async function view(p: ProjectScope, job: JobRecord): Promise<JobView> {
  return (await jobViews(p.store, [job], p.now()))[0]!;
}

async function requireJob(p: ProjectScope, jobId: string): Promise<JobRecord> {
  const job = await p.store.getJob(p.projectId, jobId);
  if (!job) throw jobNotFound(jobId);
  return job;
}

export async function listJobs(p: ProjectScope, filter: JobFilter): Promise<JobView[]> {
  const type = filter.type === undefined ? undefined : jobType(filter.type);
  const jobs = await p.store.listJobs(p.projectId, { name: filter.name, file_name: filter.file_name, type });
  return jobViews(p.store, jobs, p.now());
}

export async function getJob(p: ProjectScope, jobId: string): Promise<JobView> {
  return view(p, await requireJob(p, jobId));
}

/** The job file at `name` as a job of `type` needs it: its kind, and its model when valid. */
async function jobFileFor(p: ProjectScope, name: string, type: JobType): Promise<JobFile | undefined> {
  const tooLarge = jobFileSizeProblem((await statJobFile(p, name))?.size ?? 0);
  if (tooLarge) throw new InvalidJobFileError(name, [{ path: '', message: tooLarge }]);
  const content = await readContent(p.tree, name).catch((err: unknown) => {
    if (err instanceof EngineError && err.code === 'bad_request') return null; // a name no file can have
    throw err;
  });
  if (content === null) throw badRequest(`file_name ${quote(name)} does not exist`);
  // One validation gives the kind too (a large file's runs on a worker thread, engine/daemon-projects/project-scope.ts).
  const v = await validateForSave(p, name, content);
  let kind: FileKind = v.kind;
  // A YAML file that does not parse (git writes those) is accepted for a YAML job type: its runs fail until fixed.
  if (kind === 'invalid-yaml') kind = type === 'query' ? null : type;
  if (kind === null) throw badRequest(`file ${quote(name)} is not a job file`);
  if (kind !== type) throw badRequest(`type ${quote(type)} does not match the kind of file ${quote(name)} (${kindLabel(kind)})`);
  return 'parsed' in v ? v.parsed : undefined;
}

/** The entry at `name` (null when missing or a name no file can have); its size is checked before any read. */
async function statJobFile(p: ProjectScope, name: string) {
  return p.tree.stat(name).catch((err: unknown) => {
    if (err instanceof EngineError && err.code === 'bad_request') return null;
    throw err;
  });
}

/** 400 for a stream the replication file does not have (an invalid file cannot tell; its runs fail anyway). */
function checkStreams(file: JobFile | undefined, fileName: string, streams: readonly string[]): void {
  if (file?.kind !== 'replication') return;
  for (const s of streams) if (!streamMatches(file, s)) throw badRequest(`stream ${quote(s)} is not in ${quote(fileName)}`);
}

/** Create or update a job. */
export async function saveJob(p: ProjectScope, input: JobInput): Promise<JobView> {
  const fields = jobFields(input);
  return p.tree.withLock(async () => {
    const existing = input.id === undefined ? undefined : await requireJob(p, input.id);
    if (existing?.default && (fields.name !== existing.name || fields.type !== existing.type || fields.file_name !== existing.file_name)) {
      throw new ForbiddenError('the name, type and file_name of a default job cannot be changed');
    }
    const file = await jobFileFor(p, fields.file_name, fields.type);
    checkStreams(file, fields.file_name, fields.streams);
    const saved = existing
      ? await p.store.replaceJob({ ...fields, id: existing.id, project_id: p.projectId, default: existing.default })
      : await p.store.createJob({ ...fields, project_id: p.projectId, default: false });
    if (!saved) throw jobNotFound(input.id!); // deleted meanwhile
    return view(p, saved);
  });
}

/** Delete a job. Executions of the job are kept. */
export async function deleteJob(p: ProjectScope, jobId: string): Promise<{ job_id: string; deleted: true }> {
  const job = await requireJob(p, jobId);
  if (job.default) throw new ForbiddenError('default jobs are deleted together with their file');
  if (!(await p.store.deleteJob(p.projectId, jobId))) throw jobNotFound(jobId);
  return { job_id: jobId, deleted: true };
}

function hasBuildStep(steps: readonly PipelineStep[]): boolean {
  return steps.some((s) => s.type === 'build' || (s.type === 'group' && hasBuildStep(s.steps)));
}

/** The job's file for a run: 409 when it is missing or invalid (saving it again lists its problems). */
async function runnableFile(p: ProjectScope, job: JobRecord): Promise<JobFile> {
  if (jobFileSizeProblem((await statJobFile(p, job.file_name).catch(() => null))?.size ?? 0)) throw conflict(`job file ${quote(job.file_name)} is invalid`);
  const content = await readContent(p.tree, job.file_name).catch(() => null);
  if (content === null) throw conflict(`job file ${quote(job.file_name)} does not exist`);
  const v = await validateForSave(p, job.file_name, content);
  if (!('parsed' in v) || v.parsed === undefined || v.kind !== job.type) throw conflict(`job file ${quote(job.file_name)} is invalid`);
  return v.parsed;
}

/** Checks the overrides, then creates the execution through `runs`. */
export async function runJob(p: ProjectScope, runs: RunRequester, req: RunRequest, trigger: Trigger): Promise<string> {
  const job = await requireJob(p, req.job_id);
  const notFor = (field: string) => badRequest(`${field} does not apply to ${job.type} jobs`);
  if (req.streams !== undefined && job.type !== 'replication') throw notFor('streams');
  if (req.mode !== undefined && !modeApplies(job.type)) throw notFor('mode');
  if (req.select !== undefined && job.type !== 'pipeline') throw notFor('select');
  if (req.mode !== undefined) checkMode(req.mode);
  const vars = req.vars === undefined ? undefined : checkVars(req.vars, 'vars');
  const file = await runnableFile(p, job);
  if (req.streams !== undefined) checkStreams(file, job.file_name, req.streams);
  if (req.select !== undefined && !(file.kind === 'pipeline' && hasBuildStep(file.steps))) {
    throw badRequest('select does not apply to pipeline jobs without a build step');
  }
  const overrides: RunOverrides = {
    ...(req.streams !== undefined ? { streams: [...req.streams] } : {}),
    ...(req.mode !== undefined ? { mode: req.mode } : {}),
    ...(req.select !== undefined ? { select: [...req.select] } : {}),
    ...(vars !== undefined ? { vars } : {}),
  };
  return runs.requestRun(job, overrides, trigger);
}
