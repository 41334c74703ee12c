/**
 * PostgreSQL (and any target that is not single-writer): model and test
 * nodes run on this thread, each on its own session of one Target whose
 * connection pool holds `threads` connections. Their work happens inside the
 * database — a node sends a few statements and reads a count or a few
 * failing rows — so there is nothing to move off the event loop, and a hop
 * to a worker thread and back per node cost more CPU than the node itself
 * (bench/: 1,000 trivial models on 2 cores, ≈0.5 s of CPU less than on the
 * worker pool; PostgreSQL shares those cores). The same reasoning as the
 * daemon's monitor work (actors/daemon/monitor-work.ts).
 *
 * Seeds parse their files into rows in JavaScript: they go to the worker
 * pool (pool-runner.ts), started on the first seed of the run.
 *
 * Cancel aborts a node's session: `pg_cancel_backend` through the target
 * (engine/targets/cancellable-session.ts), then the node fails `cancelled`.
 */
import { executeNode } from '../engine/build/execute-node.js';
import { withCancellableSession } from '../engine/targets/cancellable-session.js';
import { openTarget, type Target } from '../engine/targets/index.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';
import type { Runner, RunnerInput } from './build-runner.js';
import { sameConnection } from './target-ahead.js';

/** Connects and creates the schemas (fails fast with `could not connect to '<t>'`), then returns the runner. */
export async function openMultiWriterRunner(input: RunnerInput): Promise<Runner> {
  const ahead = input.ahead !== undefined && sameConnection(input.ahead.connection, input.connection) ? input.ahead : undefined;
  const target: Target = ahead?.target ?? openTarget(input.connection, { poolSize: Math.max(1, input.threads) });
  try {
    await ahead?.ready;
    await withCancellableSession(target, undefined, (session) => (input.schemas.length > 0 ? session.createSchemas(input.schemas) : Promise.resolve()));
  } catch (err) {
    if (!ahead) await target.close().catch(() => {});
    throw err;
  }
  const engine = createNunjucksEngine();
  const aborts = new Map<string, AbortController>();
  let seedRunner: Promise<Runner> | undefined;
  const seeds = () => (seedRunner ??= import('./pool-runner.js').then((m) => m.poolRunner(input)));
  const onPool = new Set<string>();
  return {
    async execute(id, node) {
      if (node.kind === 'seed') {
        onPool.add(id);
        try {
          return await (await seeds()).execute(id, node);
        } finally {
          onPool.delete(id);
        }
      }
      const ac = new AbortController();
      aborts.set(id, ac);
      try {
        return await withCancellableSession(target, ac.signal, (session) => executeNode(node, { session, settings: input.settings, logger: input.logger, engine }));
      } finally {
        aborts.delete(id);
      }
    },
    async cancel(id) {
      if (onPool.has(id)) return (await seeds()).cancel(id);
      aborts.get(id)?.abort();
    },
    close: async () => {
      const pooled = await seedRunner?.catch(() => undefined);
      await pooled?.close();
      if (!ahead) await target.close().catch(() => {});
    },
  };
}
