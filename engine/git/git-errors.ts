/**
 * The failures of a pull that the HTTP layer answers with a status no other
 * EngineError has: a branch missing on the remote
 * (422, code `conflict`) and a fetch that could not complete — remote
 * unreachable, authentication refused, timeout (502, `git fetch failed: …`).
 * Not configured / disabled are plain `conflict` EngineErrors (409).
 * Messages never carry credentials: callers strip them before constructing.
 */
import { EngineError } from '../errors.js';

export class GitBranchMissingError extends EngineError {
  constructor(readonly branch: string) {
    super('conflict', `branch ${JSON.stringify(branch)} does not exist on remote`);
    this.name = 'GitBranchMissingError';
  }
}

export class GitFetchError extends EngineError {
  /** `detail` is git's message with credentials already stripped. */
  constructor(readonly detail: string) {
    super('connection', `git fetch failed: ${detail}`);
    this.name = 'GitFetchError';
  }
}

export const gitNotConfigured = (): EngineError => new EngineError('conflict', 'git integration is not configured');
export const gitDisabled = (): EngineError => new EngineError('conflict', 'git integration is disabled');
