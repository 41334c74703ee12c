/**
 * DuckDB (a single-writer target): every node is a job of the file's actor,
 * which runs it as a `build.node` task on the file's own thread, one at a
 * time (duckdb-actor.ts). Two runs on the same file in one process share
 * that thread and its one instance; their nodes interleave in FIFO order.
 * Cancel aborts the node's job: dropped while queued, interrupted while
 * running.
 */
import { wireTask } from '../../engine/build-plan/node-task.js';
import { runCatalog } from '../../engine/build-plan/run-catalog.js';
import { EngineError } from '../../engine/errors.js';
import type { Runner, RunnerInput } from './runner.js';
import { duckdbActor } from '../duckdb-actor.js';
import { logReceiver } from '../log-receiver.js';

/** Opens the file and creates the schemas on its thread (fails fast with the connect error), then returns the runner. */
export async function openSingleWriterRunner(input: RunnerInput): Promise<Runner> {
  const connection = input.connection;
  if (connection.type !== 'duckdb') throw new EngineError('internal', `single-writer runner: unsupported target type '${connection.type}'`);
  const actor = duckdbActor(connection.path);
  const setup = await actor.run((thread) => thread.run({ type: 'build.setup', connection, schemas: input.schemas, catalog: true }));
  const catalog = runCatalog(setup.catalog, input.schemas);
  const aborts = new Map<string, AbortController>();
  const logs = logReceiver(input.logger);
  const jsonLogs = (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON';
  const debug = input.logger.enabled('debug');
  const base = { type: 'build.node', connection, settings: input.settings, logLevel: input.logLevel, jsonLogs } as const;
  let attempt = 0;
  return {
    async execute(id, node) {
      const ac = new AbortController();
      aborts.set(id, ac);
      const key = `${id}#${++attempt}`;
      let sent = false;
      try {
        const outcome = await actor.run(
          (thread) => {
            sent = true;
            return thread.run({ ...base, node: wireTask(node, catalog), log: { channel: logs.name, key } });
          },
          { signal: ac.signal },
        );
        if (debug) input.logger.log('debug', `build[${node.name}]: ran on worker thread ${outcome.thread} (duckdb ${actor.path})`);
        return outcome;
      } finally {
        aborts.delete(id);
        // A node cancelled while queued never reached the file's thread: no lines to wait for.
        if (sent) await logs.drained(key);
        else logs.forget(key);
      }
    },
    async cancel(id) {
      aborts.get(id)?.abort();
    },
    // The actor (its thread and instance) belongs to the process: other runs and probes may share it.
    close: async () => logs.close(),
  };
}
