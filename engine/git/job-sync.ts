/**
 * Jobs after a pull (re-validated job files, default jobs, deactivated jobs), with the rules and helpers of a
 * file save (engine/projects): every changed file is validated against the
 * tree as the pull left it;
 *   - a valid job file without a default job gets one — exactly once, as
 *     the default job is looked up by file first, so repeating the step (a
 *     retried pull) changes nothing; on a kind change the default job's type
 *     follows and other jobs whose type no longer matches become inactive;
 *   - a file that is now plain loses its default job (as a save would);
 *   - an invalid job file is reported and its jobs are left alone (they fail
 *     to run until it is fixed);
 *   - a deleted job file takes its default job along; other jobs that
 *     reference it become inactive.
 * A default job that cannot be deleted because it is running becomes
 * inactive instead (deleting it later is the file delete's business).
 * Creations and type changes run before deletions, so a pull that fails
 * half-way loses nothing a retry cannot rebuild.
 */
import { EngineError } from '../errors.js';
import type { JobKind, Problem } from '../jobs/index.js';
import type { Logger } from '../log.js';
import { newDefaultJob, retyped } from '../daemon-projects/default-job.js';
import { isRejected, readContent, validateContent } from '../daemon-projects/job-files.js';
import { validationContext, type ProjectScope } from '../daemon-projects/project-scope.js';
import type { JobRecord } from '../state/store.js';

export interface InvalidFile {
  readonly name: string;
  readonly problems: readonly Problem[];
}

const quote = (s: string): string => JSON.stringify(s);

async function jobsOf(p: ProjectScope, name: string): Promise<JobRecord[]> {
  return (await p.store.jobsByFile(p.projectId, name)).filter((j) => j.file_name === name);
}

async function deactivate(p: ProjectScope, jobs: readonly JobRecord[], why: string, logger: Logger): Promise<void> {
  for (const j of jobs) {
    if (!j.active) continue;
    await p.store.replaceJob({ ...j, active: false });
    logger.log('info', `git pull: job ${j.id} set inactive: ${why}`);
  }
}

async function deleteDefault(p: ProjectScope, job: JobRecord, why: string, logger: Logger): Promise<void> {
  try {
    await p.store.deleteJob(p.projectId, job.id);
    logger.log('info', `git pull: default job ${job.id} deleted: ${why}`);
  } catch (err) {
    if (!(err instanceof EngineError && err.code === 'conflict')) throw err;
    await deactivate(p, [job], `${why} (not deleted: it has active executions)`, logger);
  }
}

/**
 * Applies the job rules to `changed` files (present in the tree) and
 * `deleted` ones (gone from it); returns the changed job files that failed
 * validation, in the order given.
 */
export async function syncJobs(p: ProjectScope, changed: readonly string[], deleted: readonly string[], logger: Logger): Promise<InvalidFile[]> {
  const invalid: InvalidFile[] = [];
  const ctx = validationContext(p);
  const later: (() => Promise<void>)[] = [];
  for (const name of changed) {
    const content = await readContent(p.tree, name);
    if (content === null) continue;
    const v = validateContent(name, content, ctx);
    const jobs = await jobsOf(p, name);
    const dflt = jobs.find((j) => j.default);
    const others = jobs.filter((j) => !j.default);
    if (isRejected(v)) {
      invalid.push({ name, problems: v.problems });
      continue;
    }
    if (v.kind === null) {
      if (dflt) later.push(() => deleteDefault(p, dflt, `file ${quote(name)} is no longer a job file`, logger));
      continue;
    }
    const kind = v.kind as JobKind; // not 'invalid-yaml': that is rejected
    if (!dflt) {
      const created = await p.store.createJob(newDefaultJob(p.projectId, name, kind));
      logger.log('info', `git pull: default job ${created.id} created for ${quote(name)}`);
    } else if (dflt.type !== kind) {
      await p.store.replaceJob(retyped(dflt, kind));
    }
    await deactivate(p, others.filter((j) => j.type !== kind), `file ${quote(name)} is now a ${kind} file`, logger);
  }
  for (const run of later) await run();
  for (const name of deleted) {
    const jobs = await jobsOf(p, name);
    for (const j of jobs.filter((x) => x.default)) await deleteDefault(p, j, `file ${quote(name)} was deleted by git`, logger);
    await deactivate(p, jobs.filter((j) => !j.default), `file ${quote(name)} was deleted by git`, logger);
  }
  return invalid;
}
