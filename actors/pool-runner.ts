/**
 * Node tasks on the worker pool: the seeds of a PostgreSQL run (they parse
 * files into rows; multi-writer-runner.ts sends them here). Connecting and
 * creating the schemas is a pool task too (`build.setup`), so the connection
 * is checked where the nodes will run. Cancel aborts a node's task, whose
 * handler cancels its backend.
 */
import { buildTaskPool } from './build-pool.js';
import type { Runner, RunnerInput } from './build-runner.js';
import { logReceiver } from './task-log.js';

/** Connects and creates the schemas (fails fast with `could not connect to '<t>'`), then returns the runner. */
export async function openPoolRunner(input: RunnerInput): Promise<Runner> {
  const pool = buildTaskPool(input.threads);
  try {
    await pool.run({ type: 'build.setup', connection: input.connection, schemas: input.schemas });
  } catch (err) {
    await pool.destroy();
    throw err;
  }
  const aborts = new Map<string, AbortController>();
  const logs = logReceiver(input.logger);
  const jsonLogs = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  let attempt = 0;
  return {
    async execute(id, node) {
      const ac = new AbortController();
      aborts.set(id, ac);
      const key = `${id}#${++attempt}`;
      try {
        return await pool.run(
          { type: 'build.node', node, connection: input.connection, settings: input.settings, logLevel: input.logLevel, jsonLogs, log: { channel: logs.name, key } },
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
      await pool.destroy();
      logs.close();
    },
  };
}
