/**
 * One `service build run|test` execution: the supervisor actor over the
 * selected nodes (ready queue, skips, fail-fast, cancel), with node tasks
 * sent to the Piscina pool (PostgreSQL) or through the DuckDB actor that
 * owns the database file (one task at a time). Hosts call `startBuild` and
 * render the events; nothing here writes to stdout.
 */
import type { Connection } from '../engine/connections/connection.js';
import { executeNode } from '../engine/build/execute-node.js';
import type { ModelTask, NodeOutcome, NodeTask, RunSettings } from '../engine/build/node-task.js';
import { EngineError } from '../engine/errors.js';
import type { Level, Logger } from '../engine/log.js';
import { openTarget, type SchemaRef, type Target, type TargetSession } from '../engine/targets/index.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';
import { duckdbActor } from './duckdb-actor.js';
import { logReceiver } from './task-log.js';
import { buildTaskPool } from './build-pool.js';
import type { TaskPool } from './pool.js';
import { RunActor } from './runtime.js';

export interface BuildNode {
  readonly id: string;
  readonly deps: readonly string[];
  readonly task: NodeTask;
  /** Seeds under --no-seeds or `test`: reported skipped without skipping dependents. */
  readonly presetSkip?: boolean;
}

/**
 * Model hooks (build.md §7.1, §16.4): `start` runs before a model's
 * pre-statements, `end` after its data tests; a failure rejects with the
 * spec's message and fails the model. Not called for seeds and tests.
 */
export type ModelHooks = (phase: 'start' | 'end', task: ModelTask, signal: AbortSignal) => Promise<void>;

export interface BuildRunInput {
  readonly nodes: readonly BuildNode[];
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly threads: number;
  readonly failFast: boolean;
  /** `run`: schemas to create before the first node (§7.2); `test`: none. */
  readonly schemas: readonly SchemaRef[];
  readonly logger: Logger;
  readonly logLevel: Level;
  readonly hooks?: ModelHooks;
  /**
   * A pool made with `buildTaskPool` (build-pool.ts) before the run (the CLI starts it while
   * the project compiles, so thread start-up overlaps compilation). Borrowed:
   * the run does not destroy it. Without it, PostgreSQL runs make their own.
   */
  readonly pool?: TaskPool;
}

export type BuildActor = RunActor<NodeTask, NodeOutcome>;

export interface BuildHandle {
  readonly actor: BuildActor;
  /** Workers after the single-writer cap. */
  readonly threads: number;
  /** Resolves when every node is final and resources are released. */
  readonly finished: Promise<Awaited<BuildActor['done']>>;
}

/**
 * Connects (fails fast with `could not connect to '<t>'`), creates schemas,
 * then starts the run. Attach listeners to `handle.actor.events` inside
 * `beforeStart`, which is called before the first dispatch.
 */
export async function startBuild(input: BuildRunInput, beforeStart: (handle: Omit<BuildHandle, 'finished'>) => void): Promise<BuildHandle> {
  const target = openTarget(input.connection);
  let control: TargetSession;
  try {
    control = await target.open();
  } catch (err) {
    await target.close().catch(() => {});
    throw err;
  }
  try {
    if (input.schemas.length > 0) await control.createSchemas(input.schemas);
  } catch (err) {
    await control.close().catch(() => {});
    await target.close().catch(() => {});
    throw err;
  }
  const runner = target.singleWriter ? singleWriterRunner(input, target, control) : poolRunner(input);
  const threads = target.singleWriter ? 1 : input.threads;
  const failedOutcomes = new Map<string, NodeOutcome>();
  const hookAborts = new Map<string, AbortController>();
  const hooks = input.hooks;
  const withHooks = (t: NodeTask): t is ModelTask => hooks !== undefined && t.kind === 'model' && (t.config.hooks.start.length > 0 || t.config.hooks.end.length > 0);
  const hook = async (phase: 'start' | 'end', id: string, t: ModelTask) => {
    if ((phase === 'start' ? t.config.hooks.start : t.config.hooks.end).length === 0) return;
    const ac = new AbortController();
    hookAborts.set(id, ac);
    try {
      await hooks!(phase, t, ac.signal);
    } finally {
      hookAborts.delete(id);
    }
  };
  const actor: BuildActor = new RunActor<NodeTask, NodeOutcome>(
    {
      nodes: input.nodes.map((n) => ({ id: n.id, deps: n.deps, node: n.task, ...(n.presetSkip ? { presetStatus: 'skipped' as const, cascade: false } : {}) })),
      threads,
      failFast: input.failFast,
    },
    {
      // A node that failed after writing resolves with `failure`: it becomes the node's error, and its outcome is kept for the rows.
      execute: async (t) => {
        const hooked = withHooks(t.node);
        if (hooked) await hook('start', t.taskId, t.node as ModelTask);
        const outcome = await runner.execute(t.taskId, t.node);
        if (outcome.failure !== undefined) {
          failedOutcomes.set(t.taskId, outcome);
          throw new EngineError('node', outcome.failure);
        }
        if (hooked) {
          try {
            await hook('end', t.taskId, t.node as ModelTask);
          } catch (err) {
            // The model was written: its rows still count (as for a failing data test).
            failedOutcomes.set(t.taskId, outcome);
            throw err;
          }
        }
        return outcome;
      },
      cancel: (t) => {
        const ac = hookAborts.get(t.taskId);
        if (ac !== undefined) return ac.abort();
        return runner.cancel(t.taskId);
      },
    },
  );
  beforeStart({ actor, threads });
  const finished = actor
    .start()
    .then((result) => ({ ...result, records: result.records.map((r) => (r.status === 'error' && failedOutcomes.has(r.id) ? { ...r, result: failedOutcomes.get(r.id) } : r)) }))
    .finally(async () => {
      await runner.close();
      await control.close().catch(() => {});
      await target.close().catch(() => {});
    });
  return { actor, threads, finished };
}

interface Runner {
  execute(id: string, task: NodeTask): Promise<NodeOutcome>;
  cancel(id: string): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL: node tasks on worker threads; cancel aborts the task, whose handler cancels the backend. */
function poolRunner(input: BuildRunInput): Runner {
  const pool = input.pool ?? buildTaskPool(input.threads);
  const aborts = new Map<string, AbortController>();
  const logs = logReceiver(input.logger);
  let attempt = 0;
  return {
    async execute(id, node) {
      const ac = new AbortController();
      aborts.set(id, ac);
      const key = `${id}#${++attempt}`;
      try {
        return await pool.run(
          {
            type: 'build.node',
            node,
            connection: input.connection,
            settings: input.settings,
            logLevel: input.logLevel,
            jsonLogs: (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON',
            log: { channel: logs.name, key },
          },
          { signal: ac.signal },
        );
      } finally {
        aborts.delete(id);
        await logs.drained(key);
      }
    },
    async cancel(id) {
      aborts.get(id)?.abort();
    },
    close: async () => {
      if (!input.pool) await pool.destroy();
      logs.close();
    },
  };
}

/** DuckDB: one session on the shared instance, every node serialized by the file's actor. */
function singleWriterRunner(input: BuildRunInput, target: Target, session: TargetSession): Runner {
  const file = input.connection.type === 'duckdb' ? input.connection.path : ':memory:';
  const actor = duckdbActor(file);
  const engine = createNunjucksEngine();
  const running = new Set<string>();
  return {
    async execute(id, node) {
      return actor.run(async () => {
        running.add(id);
        try {
          return await executeNode(node, { session, settings: input.settings, logger: input.logger, engine });
        } finally {
          running.delete(id);
        }
      });
    },
    async cancel(id) {
      if (running.has(id)) await target.cancel(session.cancelKey).catch(() => {});
      else throw new EngineError('cancelled', 'cancelled');
    },
    close: async () => {},
  };
}
