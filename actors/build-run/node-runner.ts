/**
 * The part every build runner shares once its target is set up: each node
 * goes out as one `build.node` task (compiled SQL, the run's catalog, a log
 * key per attempt), cancel aborts that node's task, and the node's log
 * lines are drained before its result is reported. The runners differ only
 * in where the task runs (`dispatch`): the Piscina pool, or a DuckDB file's
 * own thread.
 */
import type { Connection } from '../../engine/connections/connection.js';
import { wireTask } from '../../engine/build-plan/node-task.js';
import type { RunCatalog } from '../../engine/build-plan/run-catalog.js';
import { logReceiver } from '../log-receiver.js';
import type { Task, TaskResult } from '../pool-tasks/index.js';
import type { Runner, RunnerInput } from './runner.js';

type NodeTaskMessage = Extract<Task, { type: 'build.node' }>;
type NodeOutcome = TaskResult<NodeTaskMessage>;

export interface NodeDispatch {
  /** Runs the task; calls `sent()` once it reached the thread that runs it (a task dropped while queued sends no lines). */
  run(task: NodeTaskMessage, signal: AbortSignal, sent: () => void): Promise<NodeOutcome>;
  /** Appended to the `-d` line naming the thread. */
  readonly where?: string;
  close(): Promise<void>;
}

export function nodeRunner(input: RunnerInput, connection: Connection, catalog: RunCatalog, dispatch: NodeDispatch): Runner {
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
        const outcome = await dispatch.run({ ...base, node: wireTask(node, catalog), log: { channel: logs.name, key } }, ac.signal, () => (sent = true));
        if (debug) input.logger.log('debug', `build[${node.name}]: ran on worker thread ${outcome.thread}${dispatch.where ?? ''}`);
        return outcome;
      } finally {
        aborts.delete(id);
        if (sent) await logs.drained(key);
        else logs.forget(key);
      }
    },
    async cancel(id) {
      aborts.get(id)?.abort();
    },
    close: async () => {
      await dispatch.close();
      logs.close();
    },
  };
}
