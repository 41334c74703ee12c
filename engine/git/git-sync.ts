/**
 * `POST /project/git/pull` and the poller's pull (configured → fetch → compare → reconcile → jobs → record), one
 * code path:
 *
 *   1. take the project lock (the one file saves take) for the whole
 *      pull, so pulls of a project and file writes run one at a time;
 *   2. not configured / disabled → 409;
 *   3. roll back a pull a crash interrupted, then fetch the branch into the
 *      project's mirror (120 s limit): missing branch → 422, anything else
 *      → 502; failures from here on are stored in `git.last_error`;
 *   4. remote sha = `last_sha` → `pulled: false`, `last_pull` updated;
 *   5. plan against the last synced tree and the disk, apply it all or
 *      nothing (TreeTransaction);
 *   6–7. job rules for changed and deleted files (syncJobs);
 *   8. commit the tree, store `last_sha`/`last_pull`, clear `last_error`.
 *
 * Credentials never leave this module unstripped: every stored, logged or
 * thrown message passes through stripCredentials first.
 */
import { EngineError, errorChain } from '../errors.js';
import type { ProjectFile } from '../files/file-entry.js';
import type { Logger } from '../log.js';
import { projectPaths } from '../daemon-projects/project-paths.js';
import type { ProjectScope } from '../daemon-projects/project-scope.js';
import type { StateStore } from '../state/store.js';
import { projectRemote, stripCredentials, type GitRemote } from './git-credentials.js';
import { gitDisabled, gitNotConfigured } from './git-errors.js';
import { GitMirror, type TreeEntry } from './git-mirror.js';
import { syncJobs, type InvalidFile } from './job-sync.js';
import { localStates } from './local-files.js';
import { pathsToInspect, planPull, skipReason } from './pull-plan.js';
import { recoverInterruptedPull, TreeTransaction } from './tree-transaction.js';

/** The answer of a pull: what changed and what is invalid. */
export interface GitPullResult {
  readonly pulled: boolean;
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  readonly sha: string;
  readonly created_files: readonly ProjectFile[];
  readonly updated_files: readonly ProjectFile[];
  readonly deleted_file_names: readonly string[];
  readonly invalid_files: readonly InvalidFile[];
}

export interface GitSyncDeps {
  readonly dataDir: string;
  readonly store: StateStore;
  /** The project's scope as file saves see it (ProjectService.scope). */
  readonly scope: (projectId: string) => ProjectScope;
  readonly logger: Logger;
  /** 120 s. */
  readonly fetchTimeoutMs?: number;
  readonly now?: () => Date;
  /** After a pull changed the tree, still under the project lock (cluster mode publishes the tree). */
  readonly afterPull?: (projectId: string) => Promise<void>;
  /** Before a pull looks at the tree, under the project lock (cluster mode brings the local copy up to date). */
  readonly beforePull?: (projectId: string) => Promise<void>;
}

export interface PullOptions {
  /** Aborts a running fetch (daemon shutdown). */
  readonly signal?: AbortSignal;
}

export const FETCH_TIMEOUT_MS = 120_000;

/** The regular files whose content differs between two trees (or that only `to` has). */
function changedBetween(from: readonly TreeEntry[] | null, to: readonly TreeEntry[]): string[] {
  const before = new Map((from ?? []).map((e) => [e.path, e.oid]));
  return to.filter((e) => skipReason(e) === null && before.get(e.path) !== e.oid).map((e) => e.path);
}

export class GitSync {
  readonly #deps: GitSyncDeps;

  constructor(deps: GitSyncDeps) {
    this.#deps = deps;
  }

  #now(): string {
    return (this.#deps.now?.() ?? new Date()).toISOString();
  }

  async pull(projectId: string, options: PullOptions = {}): Promise<GitPullResult> {
    const { store, logger } = this.#deps;
    const scope = this.#deps.scope(projectId);
    return scope.tree.withLock(async () => {
      await this.#deps.beforePull?.(projectId);
      const project = await store.getProject(projectId);
      if (!project) throw new EngineError('not_found', `project ${projectId} not found`);
      const git = project.git;
      if (!git || git.url === '') throw gitNotConfigured();
      if (!git.enabled) throw gitDisabled();
      const paths = projectPaths(this.#deps.dataDir, projectId);
      let remote: GitRemote | null = null;
      try {
        remote = projectRemote(git.url, paths.envFile, this.#deps.dataDir);
        const mirror = await GitMirror.open(paths.git);
        if (await recoverInterruptedPull(scope.tree, paths.git)) logger.log('warn', `git pull of project ${projectId}: rolled back an interrupted pull`);
        const sha = await mirror.fetch(remote, git.branch, { timeoutMs: this.#deps.fetchTimeoutMs ?? FETCH_TIMEOUT_MS, signal: options.signal });
        if (sha === git.last_sha) {
          await store.updateProjectGit(projectId, { last_pull: this.#now(), last_error: null });
          return { pulled: false, created: 0, updated: 0, deleted: 0, sha, created_files: [], updated_files: [], deleted_file_names: [], invalid_files: [] };
        }
        const result = await this.#reconcile(scope, mirror, paths.git, sha, git.last_sha);
        await this.#deps.afterPull?.(projectId);
        await store.updateProjectGit(projectId, { last_sha: sha, last_pull: this.#now(), last_error: null });
        logger.log('info', `git pull of project ${projectId}: ${sha} (created ${result.created}, updated ${result.updated}, deleted ${result.deleted})`);
        return result;
      } catch (err) {
        const message = stripCredentials(errorChain(err), remote);
        logger.log('warn', `git pull of project ${projectId} failed: ${message}`);
        // A pull cut short by shutdown is not a failure of the remote: last_error keeps what it said.
        if (!options.signal?.aborted) await store.updateProjectGit(projectId, { last_error: message }).catch((e) => logger.log('error', `cannot store git.last_error of project ${projectId}: ${errorChain(e)}`));
        throw err;
      }
    });
  }

  /** Steps 5–8 for a fetched commit other than the last synced one. */
  async #reconcile(scope: ProjectScope, mirror: GitMirror, gitDir: string, sha: string, lastSha: string | null): Promise<GitPullResult> {
    const { logger } = this.#deps;
    const remote = await mirror.tree(sha);
    let base: TreeEntry[] | null = null;
    if (lastSha !== null) {
      if (await mirror.hasCommit(lastSha)) base = await mirror.tree(lastSha);
      else logger.log('warn', `git pull of project ${scope.projectId}: the last synced commit ${lastSha} is not in the git metadata; nothing is deleted`);
    }
    const local = await localStates(scope.tree, pathsToInspect(remote, base), sha.length);
    const plan = planPull(remote, base, (name) => local.get(name) ?? { kind: 'missing' });
    for (const s of plan.skipped) logger.log('warn', `git pull of project ${scope.projectId}: skipped ${JSON.stringify(s.name)}: ${s.reason}`);
    const tx = await TreeTransaction.begin(scope.tree, gitDir, plan);
    let applied;
    let invalid: InvalidFile[];
    try {
      applied = await tx.apply((oid) => mirror.blob(oid));
      // A retried pull re-runs the job rules for everything the commit range changed, not only what it wrote now.
      const written = new Set(plan.writes.map((w) => w.name));
      const changed = [...written, ...changedBetween(base, remote).filter((n) => !written.has(n))];
      const inRemote = new Set(remote.map((e) => e.path));
      const gone = [...new Set([...plan.deletes, ...(base ?? []).filter((e) => !inRemote.has(e.path)).map((e) => e.path)])];
      invalid = (await syncJobs(scope, changed, gone, logger)).filter((f) => written.has(f.name));
    } catch (err) {
      await tx.rollback();
      throw err;
    }
    await tx.commit();
    await mirror.markSynced(sha);
    return {
      pulled: true,
      created: applied.created.length,
      updated: applied.updated.length,
      deleted: applied.deleted.length,
      sha,
      created_files: applied.created,
      updated_files: applied.updated,
      deleted_file_names: applied.deleted,
      invalid_files: invalid,
    };
  }
}
