/**
 * The worker side of a pool task's log channel (see actors/log-receiver.ts): a
 * logger that queues lines for the host and counts them per route. The count
 * travels back with the task's outcome (worker-entry.ts), so the host knows
 * how many lines to wait for; a task that logged nothing costs no message.
 *
 * Lines leave in batches: every line logged during one turn of this thread's
 * event loop, across all its tasks on the channel, goes in one message
 * (flushed on `setImmediate`, and when a task ends). A `-d` run logs a few
 * lines per node; one message per line was one structured clone and one
 * wake-up of the host per line.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { Level, Logger } from '../../engine/log.js';

/** Where a task's log lines go: the channel name and this task's key on it. */
export interface LogRoute {
  readonly channel: string;
  readonly key: string;
}

/** One log line of a task. */
export interface LogLine {
  readonly key: string;
  readonly level: Level;
  readonly message: string;
}

/** What a worker posts on a log channel: the lines of one batch, in order. */
export interface LogMessage {
  readonly type: 'lines';
  readonly lines: readonly LogLine[];
}

const channels = new Map<string, BroadcastChannel>();
const posted = new Map<string, number>();
/** Lines not sent yet, by channel name. */
const queued = new Map<string, LogLine[]>();
let flushScheduled = false;

/** Sends every queued line, one message per channel. */
export function flushLines(): void {
  flushScheduled = false;
  for (const [name, lines] of queued) channelFor(name).postMessage({ type: 'lines', lines } satisfies LogMessage);
  queued.clear();
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

export function forwardingLogger(route: LogRoute, level: Level): Logger {
  const min = ORDER.indexOf(level);
  const enabled = (l: Level) => ORDER.indexOf(l) >= min;
  return {
    enabled,
    log(l, message) {
      if (!enabled(l)) return;
      let lines = queued.get(route.channel);
      if (!lines) queued.set(route.channel, (lines = []));
      lines.push({ key: route.key, level: l, message });
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushLines);
      }
      posted.set(route.key, (posted.get(route.key) ?? 0) + 1);
    },
  };
}

/** Lines posted on `route` so far (sent before this returns); forgets the route (called once, when its task ends). */
export function takeLinesPosted(route: LogRoute): number {
  if (queued.has(route.channel)) flushLines();
  const n = posted.get(route.key) ?? 0;
  posted.delete(route.key);
  return n;
}
