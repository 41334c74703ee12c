/**
 * Node tasks on the worker pool: the seeds of a PostgreSQL run (they parse
 * files into rows; multi-writer-runner.ts sends them here, after it checked
 * the connection and created the schemas). Cancel aborts a node's task,
 * whose handler cancels its backend.
 */
import { buildTaskPool } from './build-pool.js';
import type { Runner, RunnerInput } from './build-runner.js';
import { logReceiver } from './task-log.js';

export function poolRunner(input: RunnerInput): Runner {
  const pool = buildTaskPool(input.threads);
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
