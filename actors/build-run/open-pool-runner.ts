/**
 * Node tasks of a multi-writer (PostgreSQL) run on the Piscina pool: the
 * connection check and schemas (`build.setup`), then every model, test and
 * seed (`build.node`), each sent as compiled SQL (engine/build-plan/node-task.ts
 * `wireTask`). The workers keep their connection pools across the run's
 * nodes (tasks/worker-targets.ts) and run several nodes at once
 * (build-task-pool.ts). Cancel aborts a node's task, whose handler cancels its
 * backend; the thread lives on.
 */
import { runCatalog, type RunCatalog } from '../../engine/build-plan/run-catalog.js';
import { buildTaskPool } from './build-task-pool.js';
import { nodeRunner } from './node-runner.js';
import type { Runner, RunnerInput } from './runner.js';
import { sameConnection } from './target-ahead.js';

/** Connects and creates the schemas on a worker (fails fast with `could not connect to '<t>'`), then returns the runner. */
export async function openPoolRunner(input: RunnerInput): Promise<Runner> {
  const ahead = input.pool === undefined && input.ahead !== undefined && sameConnection(input.ahead.connection, input.connection) ? input.ahead : undefined;
  const pool = input.pool ?? ahead?.pool ?? buildTaskPool(input.threads);
  const own = pool !== input.pool && pool !== ahead?.pool;
  let catalog: RunCatalog;
  try {
    await ahead?.ready;
    const setup = await pool.run({ type: 'build.setup', connection: input.connection, schemas: input.schemas, catalog: true });
    catalog = runCatalog(setup.catalog, input.schemas);
  } catch (err) {
    if (own) await pool.destroy();
    throw err;
  }
  return nodeRunner(input, input.connection, catalog, {
    run(task, signal, sent) {
      sent();
      return pool.run(task, { signal });
    },
    close: async () => {
      if (own) await pool.destroy();
    },
  });
}
