/**
 * DuckDB (a single-writer target): one session on the file's shared
 * instance, every node serialized by the file's actor on this thread.
 */
import { executeNode } from '../engine/build/execute-node.js';
import { EngineError } from '../engine/errors.js';
import { openTarget, type TargetSession } from '../engine/targets/index.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';
import type { Runner, RunnerInput } from './build-runner.js';
import { duckdbActor } from './duckdb-actor.js';

/** Connects and creates the schemas (fails fast with `could not connect to '<t>'`), then returns the runner. */
export async function openSingleWriterRunner(input: RunnerInput): Promise<Runner> {
  const target = openTarget(input.connection);
  let session: TargetSession;
  try {
    session = await target.open();
  } catch (err) {
    await target.close().catch(() => {});
    throw err;
  }
  try {
    if (input.schemas.length > 0) await session.createSchemas(input.schemas);
  } catch (err) {
    await session.close().catch(() => {});
    await target.close().catch(() => {});
    throw err;
  }
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
    close: async () => {
      await session.close().catch(() => {});
      await target.close().catch(() => {});
    },
  };
}
