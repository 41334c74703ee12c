/**
 * How a build run executes its nodes on one target. `startBuild` (start-build.ts)
 * opens the runner its target needs — the worker pool (open-pool-runner.ts,
 * PostgreSQL) or the DuckDB file's actor on its own thread
 * (open-single-writer-runner.ts) — and each module is loaded only by runs that
 * use it.
 */
import type { NodeOutcome, NodeTask, RunSettings } from '../../engine/build-plan/node-task.js';
import type { Connection } from '../../engine/connections/connection.js';
import type { Level, Logger } from '../../engine/log.js';
import type { SchemaRef } from '../../engine/targets/target.js';
import type { TaskPool } from '../pool.js';
import type { TargetAhead } from './target-ahead.js';

export interface Runner {
  execute(id: string, task: NodeTask): Promise<NodeOutcome>;
  cancel(id: string): Promise<void>;
  /** Releases connections and threads (not a borrowed target). */
  close(): Promise<void>;
}

/** What opening a runner needs of the run. */
export interface RunnerInput {
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly threads: number;
  /** `run`: created before the first node; `test`: none. The connection is checked even when empty. */
  readonly schemas: readonly SchemaRef[];
  readonly logger: Logger;
  readonly logLevel: Level;
  /**
   * A build pool the CLI started and connected before the run
   * (target-ahead.ts), so thread start-up and connecting overlapped
   * compilation. Borrowed when its connection is the run's: the run does
   * not close it.
   */
  readonly ahead?: TargetAhead;
  /**
   * The host's long-lived worker pool (the daemon's), whose workers keep
   * their connection pools across runs: borrowed, never stopped by the run.
   * Without it (the CLI) the run starts a pool of its own, or borrows `ahead`'s.
   */
  readonly pool?: TaskPool;
}
