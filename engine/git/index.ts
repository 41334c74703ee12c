/** Git sync of project trees: the pull, its result and its errors. */
export { GitSync, FETCH_TIMEOUT_MS, type GitPullResult, type GitSyncDeps, type PullOptions } from './git-sync.js';
export { GitBranchMissingError, GitFetchError } from './git-errors.js';
export type { InvalidFile } from './job-sync.js';
