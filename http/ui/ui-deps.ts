/**
 * What the console needs from the daemon: the same services the API routes
 * use (no second path to the state store), the line router's live output
 * feed, and how to resolve a token.
 */
import type { OutputFeed } from '../../actors/daemon/output-feed.js';
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import type { GitPullResult } from '../../engine/git/git-sync.js';
import type { LineageView, LineageViewRequest } from '../../engine/lineage/lineage-view.js';
import type { Logger } from '../../engine/log.js';
import type { ProjectService } from '../../engine/daemon-projects/index.js';
import type { StateStore } from '../../engine/state/store.js';
import type { AuthFailureLimiter } from '../auth-limit.js';
import type { ExecutionControl } from '../routes/index.js';
import type { SessionOptions } from './sessions.js';

export interface ConsoleDeps {
  readonly store: StateStore;
  readonly projects: ProjectService;
  readonly executions: ExecutionControl;
  readonly connections: (projectId: string) => ConnectionRegistry;
  /** The project's git pull (absent: the Pull button answers that git sync is not available). */
  readonly gitPull?: (projectId: string) => Promise<GitPullResult>;
  /** The project tree's root on disk (lineage compiles build projects in it). */
  readonly projectRoot: (projectId: string) => string;
  /** Compiles, lays out and draws a build project's lineage (the daemon: on a worker thread); absent: in this thread. */
  readonly lineage?: (req: LineageViewRequest) => Promise<LineageView>;
  readonly output: OutputFeed;
  /**
   * Whether an execution runs in this daemon (its lines then reach `output`).
   * In cluster mode another daemon may run it: its live page then follows the
   * output stored by that daemon. Absent: every execution runs here.
   */
  readonly runsHere?: (execId: string) => boolean;
  /** Resolves a token's SHA-256 digest (hex) to its project id. */
  readonly projectForDigest: (digest: string) => Promise<string | undefined>;
  readonly logger: Logger;
  /** Failed-authentication limit per address, shared with the API; default: one of its own. */
  readonly authFailures?: AuthFailureLimiter;
  readonly sessions?: SessionOptions;
  /** How often the live stream re-reads statuses while an execution runs (ms, default 400). */
  readonly livePollMs?: number;
}
