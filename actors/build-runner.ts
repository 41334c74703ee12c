/**
 * How a build run executes its nodes on one target. `startBuild` (build-run.ts)
 * opens the runner its target needs — the worker pool (pool-runner.ts) or
 * the DuckDB file's actor (single-writer-runner.ts) — and each module is
 * loaded only by runs that use it: a PostgreSQL run's main thread never
 * loads a database driver, a DuckDB run never starts a thread.
 */
import type { NodeOutcome, NodeTask, RunSettings } from '../engine/build/node-task.js';
import type { Connection } from '../engine/connections/connection.js';
import type { Level, Logger } from '../engine/log.js';
import type { SchemaRef } from '../engine/targets/target.js';
import type { TaskPool } from './pool.js';

export interface Runner {
  execute(id: string, task: NodeTask): Promise<NodeOutcome>;
  cancel(id: string): Promise<void>;
  /** Releases connections (and the pool, unless borrowed). */
  close(): Promise<void>;
}

/** What opening a runner needs of the run. */
export interface RunnerInput {
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly threads: number;
  /** `run`: created before the first node (§7.2); `test`: none. The connection is checked even when empty. */
  readonly schemas: readonly SchemaRef[];
  readonly logger: Logger;
  readonly logLevel: Level;
  /**
   * A pool made with `buildTaskPool` (build-pool.ts) before the run (the CLI
   * starts it while the project compiles, so thread start-up overlaps
   * compilation). Borrowed: the run does not destroy it. Without it,
   * PostgreSQL runs make their own.
   */
  readonly pool?: TaskPool;
}
