/**
 * The worker side of a pool task's log channel (see actors/task-log.ts): a
 * logger that posts lines to the host and counts them per route. The count
 * travels back with the task's outcome (worker-entry.ts), so the host knows
 * how many lines to wait for; a task that logged nothing costs no message.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { Level, Logger } from '../../engine/log.js';

/** Where a task's log lines go: the channel name and this task's key on it. */
export interface LogRoute {
  readonly channel: string;
  readonly key: string;
}

/** What a task posts on its log channel. */
export interface LogMessage {
  readonly type: 'line';
  readonly key: string;
  readonly level: Level;
  readonly message: string;
}

const channels = new Map<string, BroadcastChannel>();
const posted = new Map<string, number>();

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

export function forwardingLogger(route: LogRoute, level: Level): Logger {
  const min = ORDER.indexOf(level);
  const enabled = (l: Level) => ORDER.indexOf(l) >= min;
  return {
    enabled,
    log(l, message) {
      if (!enabled(l)) return;
      channelFor(route.channel).postMessage({ type: 'line', key: route.key, level: l, message } satisfies LogMessage);
      posted.set(route.key, (posted.get(route.key) ?? 0) + 1);
    },
  };
}

/** Lines posted on `route` so far; forgets the route (called once, when its task ends). */
export function takeLinesPosted(route: LogRoute): number {
  const n = posted.get(route.key) ?? 0;
  posted.delete(route.key);
  return n;
}
