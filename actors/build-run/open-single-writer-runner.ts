/**
 * DuckDB (a single-writer target): every node is a job of the file's actor,
 * which runs it as a `build.node` task on the file's own thread, one at a
 * time (duckdb-actor.ts). Two runs on the same file in one process share
 * that thread and its one instance; their nodes interleave in FIFO order.
 * Cancel aborts the node's job: dropped while queued, interrupted while
 * running.
 */
import { runCatalog } from '../../engine/build-plan/run-catalog.js';
import { EngineError } from '../../engine/errors.js';
import { nodeRunner } from './node-runner.js';
import type { Runner, RunnerInput } from './runner.js';
import { duckdbActor } from '../duckdb-actor.js';

/** Opens the file and creates the schemas on its thread (fails fast with the connect error), then returns the runner. */
export async function openSingleWriterRunner(input: RunnerInput): Promise<Runner> {
  const connection = input.connection;
  if (connection.type !== 'duckdb') throw new EngineError('internal', `single-writer runner: unsupported target type '${connection.type}'`);
  const actor = duckdbActor(connection.path);
  const setup = await actor.run((thread) => thread.run({ type: 'build.setup', connection, schemas: input.schemas, catalog: true }));
  const catalog = runCatalog(setup.catalog, input.schemas);
  return nodeRunner(input, connection, catalog, {
    // A node cancelled while queued never reaches the file's thread: no lines to wait for.
    run: (task, signal, sent) =>
      actor.run(
        (thread) => {
          sent();
          return thread.run(task);
        },
        { signal },
      ),
    where: ` (duckdb ${actor.path})`,
    // The actor (its thread and instance) belongs to the process: other runs and probes may share it.
    close: async () => {},
  });
}
