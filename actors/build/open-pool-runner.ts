/**
 * Node tasks of a multi-writer (PostgreSQL) run on the Piscina pool: the
 * connection check and schemas (`build.setup`), then every model, test and
 * seed (`build.node`), each sent as compiled SQL (engine/build-plan/node-task.ts
 * `wireTask`). The workers keep their connection pools across the run's
 * nodes (tasks/worker-targets.ts) and run several nodes at once
 * (build-task-pool.ts). Cancel aborts a node's task, whose handler cancels its
 * backend; the thread lives on.
 */
import { wireTask } from '../../engine/build-plan/node-task.js';
import { runCatalog, type RunCatalog } from '../../engine/build-plan/run-catalog.js';
import { buildTaskPool } from './build-task-pool.js';
import type { Runner, RunnerInput } from './runner.js';
import { sameConnection } from './target-ahead.js';
import { logReceiver } from '../log-receiver.js';

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
  const aborts = new Map<string, AbortController>();
  const logs = logReceiver(input.logger);
  const jsonLogs = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  const debug = input.logger.enabled('debug');
  const base = { type: 'build.node', connection: input.connection, settings: input.settings, logLevel: input.logLevel, jsonLogs } as const;
  let attempt = 0;
  return {
    async execute(id, node) {
      const ac = new AbortController();
      aborts.set(id, ac);
      const key = `${id}#${++attempt}`;
      try {
        const outcome = await pool.run({ ...base, node: wireTask(node, catalog), log: { channel: logs.name, key } }, { signal: ac.signal });
        if (debug) input.logger.log('debug', `build[${node.name}]: ran on worker thread ${outcome.thread}`);
        return outcome;
      } finally {
        aborts.delete(id);
        await logs.drained(key);
      }
    },
    async cancel(id) {
      aborts.get(id)?.abort();
    },
    close: async () => {
      if (own) await pool.destroy();
      logs.close();
    },
  };
}
