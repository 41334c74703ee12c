/**
 * The worker side of a pool task's log channel (see actors/task-log.ts):
 * a logger that posts lines to the host, and the `end` marker a task posts
 * after its last line.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { Level, Logger } from '../../engine/log.js';

/** Where a task's log lines go: the channel name and this task's key on it. */
export interface LogRoute {
  readonly channel: string;
  readonly key: string;
}

/** What a task posts on its log channel. */
export type LogMessage =
  | { readonly type: 'line'; readonly key: string; readonly level: Level; readonly message: string }
  | { readonly type: 'end'; readonly key: string };

const channels = new Map<string, BroadcastChannel>();

export function channelFor(name: string): BroadcastChannel {
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
  const channel = channelFor(route.channel);
  const enabled = (l: Level) => ORDER.indexOf(l) >= min;
  return {
    enabled,
    log(l, message) {
      if (enabled(l)) channel.postMessage({ type: 'line', key: route.key, level: l, message } satisfies LogMessage);
    },
  };
}


/** Posts the end marker: every line of this task has been sent. */
export function endOfLog(route: LogRoute): void {
  channelFor(route.channel).postMessage({ type: 'end', key: route.key } satisfies LogMessage);
}
