/**
 * Pool task `build.node`: executes one build node on a worker thread against
 * a PostgreSQL target. Each worker keeps one `Target` (its connection pool)
 * per connection, so consecutive tasks reuse connections. Cancellation asks
 * the database to stop (`Target.cancel` → `pg_cancel_backend`); the thread
 * is never killed.
 *
 * Log lines (warnings, `-d` SQL and chunk lines, the §9.3 resume hint) go
 * back to the host's logger on the run's BroadcastChannel, not to the
 * worker's own stderr: the host may be an in-process caller, a pipeline step
 * or the daemon, each capturing its own log. After the last line the task
 * posts an `end` marker, so the host has every line before it reports the
 * node (lines from one sender keep their order on a channel).
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { Connection } from '../../engine/connections/connection.js';
import { executeNode } from '../../engine/build/execute-node.js';
import type { NodeOutcome, NodeTask, RunSettings } from '../../engine/build/node-task.js';
import { EngineError } from '../../engine/errors.js';
import { streamLogger, type Level, type Logger } from '../../engine/log.js';
import { openTarget, type Target } from '../../engine/targets/index.js';
import { createNunjucksEngine } from '../../engine/template/nunjucks-engine.js';
import type { TaskHandler } from './task-handler.js';

/** Where a task's log lines go: the channel name and this task's key on it. */
export interface LogRoute {
  readonly channel: string;
  readonly key: string;
}

/** What a task posts on its log channel. */
export type LogMessage =
  | { readonly type: 'line'; readonly key: string; readonly level: Level; readonly message: string }
  | { readonly type: 'end'; readonly key: string };

export interface BuildNodeTask {
  readonly type: 'build.node';
  readonly node: NodeTask;
  readonly connection: Connection;
  readonly settings: RunSettings;
  readonly logLevel: Level;
  readonly jsonLogs?: boolean;
  /** Forward log lines to the host; without it they go to this process's stderr. */
  readonly log?: LogRoute;
}

const targets = new Map<string, Target>();
const engine = createNunjucksEngine();
const channels = new Map<string, BroadcastChannel>();

function targetFor(connection: Connection): Target {
  const key = JSON.stringify(connection);
  let t = targets.get(key);
  if (!t) {
    t = openTarget(connection, { poolSize: 1 });
    targets.set(key, t);
  }
  return t;
}

function channelFor(name: string): BroadcastChannel {
  let c = channels.get(name);
  if (!c) {
    c = new BroadcastChannel(name);
    c.unref();
    channels.set(name, c);
  }
  return c;
}

const ORDER: readonly Level[] = ['trace', 'debug', 'info', 'warn', 'error'];

function forwardingLogger(route: LogRoute, level: Level): Logger {
  const min = ORDER.indexOf(level);
  const channel = channelFor(route.channel);
  const enabled = (l: Level) => ORDER.indexOf(l) >= min;
  return {
    enabled,
    log(l, message) {
      if (enabled(l)) channel.postMessage({ type: 'line', key: route.key, level: l, message } satisfies LogMessage);
    },
  };
}

export const buildNode: TaskHandler<BuildNodeTask, NodeOutcome> = async (task, { signal }) => {
  try {
    if (signal.aborted) throw new EngineError('cancelled', 'cancelled');
    const target = targetFor(task.connection);
    const session = await target.open();
    const onAbort = () => void target.cancel(session.cancelKey).catch(() => {});
    // An abort that landed while connecting has already fired: the listener below would never run.
    if (signal.aborted) {
      await session.close().catch(() => {});
      throw new EngineError('cancelled', 'cancelled');
    }
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const logger = task.log ? forwardingLogger(task.log, task.logLevel) : streamLogger({ level: task.logLevel, json: task.jsonLogs });
      return await executeNode(task.node, { session, settings: task.settings, logger, engine });
    } catch (err) {
      if (signal.aborted) throw new EngineError('cancelled', 'cancelled', err);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      await session.close().catch(() => {});
    }
  } finally {
    if (task.log) channelFor(task.log.channel).postMessage({ type: 'end', key: task.log.key } satisfies LogMessage);
  }
};
