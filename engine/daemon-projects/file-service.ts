/**
 * Project files with their job side effects. The tree
 * does the file-system work; this module decides what happens to jobs: a
 * saved job file is validated in full first (422), a valid one without a
 * default job gets one, a kind change follows the rules, deletes
 * take default jobs along and refuse while other jobs still point at the
 * file. Each check-then-write runs under the project lock.
 */
import { syncDirectory } from '../files/atomic-write.js';
import { isUtf8 } from 'node:buffer';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StagedFile } from '../files/atomic-write.js';
import { decodeBody, type ProjectFile } from '../files/file-entry.js';
import type { GroupRunner } from '../files/project-lock.js';
import type { ListOptions, SaveInput, Staging } from '../files/project-tree.js';
import { isSqlName, isYamlName, type JobKind } from '../jobs/index.js';
import { notAJobWarning } from '../jobs/not-a-job.js';
import type { JobRecord } from '../state/store.js';
import { defaultJobName, newDefaultJob, retyped } from './default-job.js';
import { classifyContent, isRejected, kindLabel, MAX_JOB_FILE_BYTES, readContent, readContentSync, validateContent, type FileKind } from './job-files.js';
import { activeExecutions, badRequest, conflict, fileNotFound, InvalidJobFileError } from './project-errors.js';
import { OFF_THREAD_VALIDATION_BYTES, validateForSave, validationContext, type ProjectScope } from './project-scope.js';

export interface SaveFileResult {
  readonly file: ProjectFile;
  readonly job_file_kind?: JobKind;
  readonly default_job_id?: string;
  /** Why a file that looks meant as a job file was saved as a plain file (engine/jobs/not-a-job.ts). */
  readonly warnings?: string[];
}

export interface DeleteFileResult {
  readonly name: string;
  readonly deleted: true;
  readonly deleted_job_ids: string[];
}

export interface RenameFileResult {
  readonly file: ProjectFile;
  readonly updated_job_ids: string[];
}

const quote = (s: string): string => JSON.stringify(s);
const ids = (jobs: readonly JobRecord[]): string => jobs.map((j) => j.id).join(', ');

function kindChangeRefused(name: string, jobs: readonly JobRecord[], from: FileKind, to: FileKind) {
  return conflict(`file ${quote(name)} is referenced by jobs ${ids(jobs)}; its kind cannot change from ${kindLabel(from)} to ${kindLabel(to)}`);
}

async function refuseIfActive(p: ProjectScope, jobs: readonly JobRecord[]): Promise<void> {
  for (const j of jobs) if ((await p.store.activeExecutions(j.id)).length > 0) throw activeExecutions(j.id);
}

export function getFile(p: ProjectScope, name: string): Promise<ProjectFile> {
  return p.tree.get(name);
}

export function listFiles(p: ProjectScope, options: ListOptions): Promise<ProjectFile[]> {
  return p.tree.list(options);
}

/**
 * Save. The content is written and fsync'ed before the save asks for the
 * project lock (ProjectTree.stage: on the file writer thread, together with
 * the other saves of the same event-loop turn); under the lock only the checks, the
 * rename and the job changes run. The directory fsync that makes the rename
 * durable runs after the lock is released (other saves share it) and before
 * the answer.
 *
 * A file whose name cannot hold a job file (not .yaml/.yml/.sql) shares its
 * turn at the lock with the like saves queued with it (savePlainFiles): their
 * checks and renames run one after the other in arrival order, the renames
 * on the file writer thread, a batch per round trip.
 *
 * Durability is unchanged: a save answers only once its temporary file was
 * fsync'ed, renamed over the target and the directory fsync'ed, so a 200
 * means the bytes and the rename are on disk.
 */
export async function saveFile(p: ProjectScope, input: SaveInput): Promise<SaveFileResult> {
  const { name } = input;
  const abs = p.tree.resolve(name);
  if (input.is_dir === true) return { file: await p.tree.save(input) };
  const content = decodeBody(input.body ?? '', input.encoding);
  const checked = await validateForSave(p, name, content);
  if (isRejected(checked)) throw new InvalidJobFileError(name, checked.problems);
  const kind = checked.kind as JobKind | null;
  const staging = p.tree.stage(name, content, abs);
  const syncLater = new Set<string>();
  // The lock is taken once the content is on disk, so a holder never waits for its own fsync
  // (which may queue behind other saves' fsyncs in libuv's threadpool): under the lock only
  // synchronous work and the rename remain, and saves queue for the lock only briefly.
  const staged = await staging.file;
  try {
    if (kind === null && !isYamlName(name) && !isSqlName(name)) {
      return await p.tree.joinLock(savePlainFiles, { p, input, abs, content, staging, staged, syncLater });
    }
    const saved = await p.tree.withLock(() => checkAndSave(p, input, kind, staging, syncLater));
    return kind === null ? withNotAJobWarning(p, name, content, saved) : saved;
  } catch (err) {
    await p.tree.discard(staging); // a no-op once renamed
    throw err;
  } finally {
    await Promise.all([...syncLater].map(syncDirectory));
  }
}

/** A build project's models are `.sql` files without connection headers: no warning for those. */
function inBuildProject(p: ProjectScope, name: string): boolean {
  const parts = name.split('/').slice(0, -1);
  for (let i = parts.length; i >= 0; i--) {
    const dir = parts.slice(0, i).join('/');
    for (const marker of ['service_build.yml', 'dbt_project.yml']) {
      if (existsSync(path.join(p.tree.root, dir, marker))) return true;
    }
  }
  return false;
}

function withNotAJobWarning(p: ProjectScope, name: string, content: Buffer, saved: SaveFileResult): SaveFileResult {
  if (!isUtf8(content)) return saved;
  const warning = notAJobWarning(name, content.toString('utf8'), () => inBuildProject(p, name));
  if (warning === undefined) return saved;
  p.logger?.log('warn', `project ${p.projectId}: ${warning}`);
  return { ...saved, warnings: [warning] };
}

/** Under the lock: the save's job checks, the save of the staged content, the job changes. */
async function checkAndSave(p: ProjectScope, input: SaveInput, kind: JobKind | null, staged: Staging, syncLater: Set<string>): Promise<SaveFileResult> {
  const { name } = input;
  const jobs = (await p.store.jobsByFile(p.projectId, name)).filter((j) => j.file_name === name);
  const dflt = jobs.find((j) => j.default);
  const others = jobs.filter((j) => !j.default);
  // Under a name that only ever holds plain files (not .yaml/.yml/.sql) the old kind is null whatever the content.
  // Over the job-file limit the old content is not read (it cannot be a job file's to classify).
  const large = (isYamlName(name) || isSqlName(name)) && largerThanJobFile(p.tree.resolve(name));
  const old = !large && (isYamlName(name) || isSqlName(name)) ? readContentSync(p.tree, name) : null;
  // A YAML file that no longer parses (only git writes those) has the kind its jobs say.
  // A large file's kind is its jobs' type (a job file always has its default job): parsing it here,
  // on the event loop and under the project lock, would stall every other request.
  const known = dflt?.type ?? others[0]?.type ?? null;
  let before: FileKind = large ? known : old === null ? null : old.length >= OFF_THREAD_VALIDATION_BYTES ? known : classifyContent(name, old);
  if (before === 'invalid-yaml') before = dflt?.type ?? others[0]?.type ?? before;
  if ((old !== null || large) && before !== kind) {
    if (others.length > 0) throw kindChangeRefused(name, others, before, kind);
    if (kind === null && dflt) await refuseIfActive(p, [dflt]);
  }
  const file = await p.tree.save(input, { staged, syncLater });
  if (kind === null) {
    if (dflt) await p.store.deleteJob(p.projectId, dflt.id);
    return { file };
  }
  if (dflt) {
    if (dflt.type !== kind) await p.store.replaceJob(retyped(dflt, kind));
    return { file, job_file_kind: kind };
  }
  const created = await p.store.createJob(newDefaultJob(p.projectId, name, kind));
  return { file, job_file_kind: kind, default_job_id: created.id };
}

function largerThanJobFile(abs: string): boolean {
  try {
    return statSync(abs).size > MAX_JOB_FILE_BYTES;
  } catch {
    return false; // missing: nothing to read either
  }
}

/** A save of a plain file waiting for its turn (see saveFile). */
interface PlainSave {
  readonly p: ProjectScope;
  readonly input: SaveInput;
  readonly abs: string;
  readonly content: Buffer;
  readonly staging: Staging;
  readonly staged: StagedFile | null;
  readonly syncLater: Set<string>;
}

/**
 * Under the lock, in arrival order: the plain-file saves of one turn. A save
 * whose file no job references has no job side effect, so its check (one
 * store read) may run before the renames of the saves ahead of it, which
 * change nothing it reads; those renames go to ProjectTree.commitBatch
 * together. A save whose file jobs reference waits for the renames ahead of
 * it and runs checkAndSave on its own. Each save settles on its own.
 */
const savePlainFiles: GroupRunner<PlainSave, SaveFileResult> = async (items) => {
  const out: PromiseSettledResult<SaveFileResult>[] = new Array(items.length);
  let batch: number[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const indices = batch;
    batch = [];
    const saves = indices.map((i) => items[i]!);
    let results: PromiseSettledResult<ProjectFile>[];
    try {
      results = await saves[0]!.p.tree.commitBatch(saves.map((s) => ({ name: s.input.name, abs: s.abs, data: s.content, staged: s.staged })));
    } catch (reason) {
      results = saves.map(() => ({ status: 'rejected', reason }));
    }
    results.forEach((r, k) => {
      const s = saves[k]!;
      if (r.status === 'fulfilled') s.syncLater.add(path.dirname(s.abs));
      out[indices[k]!] = r.status === 'fulfilled' ? { status: 'fulfilled', value: { file: r.value } } : r;
    });
  };
  for (const [i, s] of items.entries()) {
    let jobs: JobRecord[];
    try {
      jobs = (await s.p.store.jobsByFile(s.p.projectId, s.input.name)).filter((j) => j.file_name === s.input.name);
    } catch (reason) {
      out[i] = { status: 'rejected', reason };
      continue;
    }
    if (jobs.length === 0) {
      batch.push(i);
      continue;
    }
    await flush();
    try {
      out[i] = { status: 'fulfilled', value: await checkAndSave(s.p, s.input, null, s.staging, s.syncLater) };
    } catch (reason) {
      out[i] = { status: 'rejected', reason };
    }
  }
  await flush();
  return out;
};

/** Delete a file (its default job goes with it). */
export async function deleteFile(p: ProjectScope, name: string): Promise<DeleteFileResult> {
  p.tree.resolve(name);
  return p.tree.withLock(async () => {
    if ((await p.tree.stat(name)) === null) throw fileNotFound(name);
    const jobs = await p.store.jobsByFile(p.projectId, name);
    const others = jobs.filter((j) => !j.default);
    if (others.length > 0) throw conflict(`file ${quote(name)} is referenced by jobs ${ids(others)}`);
    const defaults = jobs.filter((j) => j.default);
    await refuseIfActive(p, defaults);
    // Jobs first: if a run starts in between, the file is still there and a retry finishes the job.
    for (const j of defaults) await p.store.deleteJob(p.projectId, j.id);
    await p.tree.delete(name);
    return { name, deleted: true, deleted_job_ids: defaults.map((j) => j.id) };
  });
}

/**
 * Rename. Only a file's own name decides its kind by extension, so a
 * directory move never changes a kind; a file move may, and is refused when
 * a job references the file. A plain file that becomes a valid job file gets
 * its default job.
 */
export async function renameFile(p: ProjectScope, oldName: string, newName: string): Promise<RenameFileResult> {
  p.tree.resolve(oldName);
  p.tree.resolve(newName);
  if (newName.startsWith(`${oldName}/`)) throw badRequest(`cannot move ${quote(oldName)} into itself`);
  return p.tree.withLock(async () => {
    const entry = await p.tree.stat(oldName);
    if (entry === null) throw fileNotFound(oldName);
    const jobs = await p.store.jobsByFile(p.projectId, oldName);
    let becomes: JobKind | null = null;
    // A file over the job-file limit is no job file whatever its name: not read, not parsed.
    if (!entry.is_dir && entry.size <= MAX_JOB_FILE_BYTES && (await p.tree.stat(newName)) === null) {
      const content = (await readContent(p.tree, oldName)) ?? Buffer.alloc(0);
      const from = classifyContent(oldName, content);
      const to = classifyContent(newName, content);
      if (from !== to && jobs.length > 0) throw kindChangeRefused(oldName, jobs, from, to);
      if (from !== to && to !== null && to !== 'invalid-yaml' && jobs.length === 0) becomes = to;
    }
    const file = await p.tree.rename(oldName, newName);
    const updated: string[] = [];
    for (const job of jobs) {
      const fileName = newName + job.file_name.slice(oldName.length);
      const name = job.default ? defaultJobName(fileName) : job.name;
      await p.store.replaceJob({ ...job, file_name: fileName, name });
      updated.push(job.id);
    }
    if (becomes !== null) {
      const content = (await readContent(p.tree, newName)) ?? Buffer.alloc(0);
      if (!isRejected(validateContent(newName, content, validationContext(p)))) {
        await p.store.createJob(newDefaultJob(p.projectId, newName, becomes));
      }
    }
    return { file, updated_job_ids: updated };
  });
}
