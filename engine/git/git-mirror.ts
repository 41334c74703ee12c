/**
 * The git metadata of one project (kept outside the project tree): a bare repository
 * at `projects/<id>/git/`, outside the project root, so the tree itself has
 * no `.git`. A pull fetches the configured branch into `refs/service/fetched`
 * and, once the tree matches it, moves `refs/service/synced` there — that
 * ref keeps the last synced commit's tree (the base for deletions) alive
 * even after a force-push on the remote.
 *
 * git runs through simple-git with a small, explicit environment: no
 * ambient GIT_* variables, `LC_ALL=C` so messages can be recognised, no
 * terminal prompts, and credentials only as environment variables read by
 * an inline credential helper (never in an argument list).
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { simpleGit, type SimpleGit, type SimpleGitOptions } from 'simple-git';
import { EngineError } from '../errors.js';
import type { GitRemote } from './git-credentials.js';
import { stripCredentials } from './git-credentials.js';
import { GitBranchMissingError, GitFetchError } from './git-errors.js';

/** One entry of a commit's tree (`git ls-tree -r`): mode `100644`/`100755` files, `120000` symlinks, `160000` submodules. */
export interface TreeEntry {
  readonly path: string;
  readonly mode: string;
  readonly oid: string;
}

export const FETCHED_REF = 'refs/service/fetched';
export const SYNCED_REF = 'refs/service/synced';

/** Variables of the daemon's environment git may see (paths, home for ~/.gitconfig and ~/.ssh, the SSH agent, proxies). */
const PASSED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'SSH_AUTH_SOCK', 'SYSTEMROOT', 'http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'];

/** Answers git's `get` with the two variables; `store`/`erase` do nothing. */
const CREDENTIAL_HELPER = '!f() { test "$1" = get || exit 0; echo "username=${SERVICE_GIT_USERNAME}"; echo "password=${SERVICE_GIT_PASSWORD}"; }; f';

function gitMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('; ');
}

export class GitMirror {
  readonly dir: string;
  readonly #git: SimpleGit;

  private constructor(dir: string) {
    this.dir = dir;
    this.#git = this.#client({});
  }

  /** The mirror at `dir`, created as an empty bare repository the first time. */
  static async open(dir: string): Promise<GitMirror> {
    const abs = path.resolve(dir);
    await mkdir(abs, { recursive: true });
    const mirror = new GitMirror(abs);
    const initialised = await stat(path.join(abs, 'HEAD')).then(() => true, () => false);
    if (!initialised) await mirror.#run(['init', '--bare', '--quiet'], 'cannot create the git metadata repository');
    return mirror;
  }

  #client(extra: { signal?: AbortSignal; remote?: GitRemote }): SimpleGit {
    const env: Record<string, string> = {};
    for (const k of PASSED_ENV) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    Object.assign(env, { LC_ALL: 'C', GIT_DIR: this.dir, GIT_TERMINAL_PROMPT: '0' });
    const credentials = extra.remote?.credentials;
    const options: Partial<SimpleGitOptions> = {
      baseDir: this.dir,
      allowEnvironment: ['GIT_DIR', 'GIT_TERMINAL_PROMPT'],
      ...(extra.signal ? { abort: extra.signal } : {}),
    };
    if (credentials) {
      // Our own helper, not user input: the empty entry first drops any configured helper (which could store them).
      options.config = ['credential.helper=', `credential.helper=${CREDENTIAL_HELPER}`];
      options.unsafe = { allowUnsafeCredentialHelper: true };
      env.SERVICE_GIT_USERNAME = credentials.username;
      env.SERVICE_GIT_PASSWORD = credentials.password;
    }
    return simpleGit(options).env(env);
  }

  async #run(args: string[], what: string): Promise<string> {
    try {
      return await this.#git.raw(args);
    } catch (err) {
      throw new EngineError('internal', what, new Error(gitMessage(err)));
    }
  }

  /**
   * Fetches `branch` of `remote` into FETCHED_REF and returns its commit sha.
   * GitBranchMissingError when the remote has no such branch; GitFetchError
   * (credentials stripped) for anything else, including the time limit.
   */
  async fetch(remote: GitRemote, branch: string, options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<string> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const ref = `refs/heads/${branch}`;
    const valid = await this.#git.raw(['check-ref-format', ref]).then(() => true, () => false);
    if (!valid) throw new GitBranchMissingError(branch);
    try {
      await this.#client({ signal, remote }).raw(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', remote.url, `+${ref}:${FETCHED_REF}`]);
    } catch (err) {
      if (timeout.aborted) throw new GitFetchError(`timed out after ${Math.round(options.timeoutMs / 1000)} s`);
      if (options.signal?.aborted) throw new GitFetchError('cancelled');
      const message = gitMessage(err);
      if (/couldn't find remote ref/i.test(message)) throw new GitBranchMissingError(branch);
      throw new GitFetchError(stripCredentials(message, remote));
    }
    return (await this.#run(['rev-parse', '--verify', '--quiet', `${FETCHED_REF}^{commit}`], 'cannot read the fetched commit')).trim();
  }

  /** True when the commit is in the mirror (a lost or re-created mirror may not have the last synced one). */
  async hasCommit(sha: string): Promise<boolean> {
    return this.#git.raw(['cat-file', '-e', `${sha}^{commit}`]).then(() => true, () => false);
  }

  /** Every non-tree entry of the commit's tree, recursively. */
  async tree(sha: string): Promise<TreeEntry[]> {
    const out = await this.#run(['ls-tree', '-r', '-z', '--full-tree', sha], `cannot list the tree of ${sha}`);
    const entries: TreeEntry[] = [];
    for (const record of out.split('\0')) {
      if (record === '') continue;
      const tab = record.indexOf('\t');
      const [mode, , oid] = record.slice(0, tab).split(' ');
      entries.push({ path: record.slice(tab + 1), mode: mode!, oid: oid! });
    }
    return entries;
  }

  async blob(oid: string): Promise<Buffer> {
    try {
      return await this.#git.binaryCatFile(['blob', oid]);
    } catch (err) {
      throw new EngineError('internal', `cannot read blob ${oid}`, new Error(gitMessage(err)));
    }
  }

  /** Records the commit the tree now matches. */
  async markSynced(sha: string): Promise<void> {
    await this.#run(['update-ref', SYNCED_REF, sha], 'cannot record the synced commit');
  }
}
