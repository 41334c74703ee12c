/**
 * One `service build run|test` execution: the supervisor actor over the
 * selected nodes (ready queue, skips, fail-fast, cancel), with node tasks
 * run on the Piscina pool (PostgreSQL) or on the thread of the DuckDB actor
 * that owns the database file (one task at a time). Hosts call `startBuild`
 * and render the events; nothing here writes to stdout.
 */
import type { ModelTask, NodeOutcome, NodeTask } from '../../engine/build-plan/node-task.js';
import { EngineError } from '../../engine/errors.js';
import { isSingleWriter } from '../../engine/targets/traits.js';
import type { Runner, RunnerInput } from './runner.js';
import { RunActor } from '../run-actor.js';

export interface BuildNode {
  readonly id: string;
  readonly deps: readonly string[];
  readonly task: NodeTask;
  /** Seeds under --no-seeds or `test`: reported skipped without skipping dependents. */
  readonly presetSkip?: boolean;
}

/**
 * Model hooks: `start` runs before a model's
 * pre-statements, `end` after its data tests; a failure rejects with the
 * documented message and fails the model. Not called for seeds and tests.
 */
export type ModelHooks = (phase: 'start' | 'end', task: ModelTask, signal: AbortSignal) => Promise<void>;

/** What a run needs: its runner's input (connection, schemas, threads, target opened ahead, logging) plus the DAG. */
export interface BuildRunInput extends RunnerInput {
  readonly nodes: readonly BuildNode[];
  readonly failFast: boolean;
  readonly hooks?: ModelHooks;
}

export type BuildActor = RunActor<NodeTask, NodeOutcome>;

export interface BuildHandle {
  readonly actor: BuildActor;
  /** Workers after the single-writer cap. */
  readonly threads: number;
  /**
   * The outcome of a node that failed after it was written (a failing data
   * test, an end hook), readable from its `node.finish` event on: what was
   * built and which tests ran.
   */
  readonly failedOutcome: (id: string) => NodeOutcome | undefined;
  /** Resolves when every node is final and resources are released. */
  readonly finished: Promise<Awaited<BuildActor['done']>>;
}

/**
 * Connects (fails fast with `could not connect to '<t>'`), creates schemas,
 * then starts the run. Attach listeners to `handle.actor.events` inside
 * `beforeStart`, which is called before the first dispatch.
 */
export async function startBuild(input: BuildRunInput, beforeStart: (handle: Omit<BuildHandle, 'finished'>) => void): Promise<BuildHandle> {
  const singleWriter = isSingleWriter(input.connection.type);
  // Each runner's module (and the drivers it needs) loads only for runs on its kind of target.
  const runner: Runner = singleWriter
    ? await (await import('./open-single-writer-runner.js')).openSingleWriterRunner(input)
    : await (await import('./open-pool-runner.js')).openPoolRunner(input);
  const threads = singleWriter ? 1 : input.threads;
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
  const failedOutcome = (id: string) => failedOutcomes.get(id);
  beforeStart({ actor, threads, failedOutcome });
  const finished = actor
    .start()
    .then((result) => ({ ...result, records: result.records.map((r) => (r.status === 'error' && failedOutcomes.has(r.id) ? { ...r, result: failedOutcomes.get(r.id) } : r)) }))
    .finally(() => runner.close());
  return { actor, threads, failedOutcome, finished };
}
