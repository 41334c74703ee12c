/**
 * The host side of a pool task's log channel: worker tasks post their log
 * lines on a BroadcastChannel (not the worker's own stderr), because the host
 * may be the CLI, a pipeline step or the daemon, each capturing its own log.
 * After its last line a task posts an `end` marker, so the host has every
 * line before it reports the task (lines from one sender keep their order).
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import type { Level, Logger } from '../engine/log.js';
import type { LogMessage } from './tasks/task-log.js';

export type LineSink = (key: string, level: Level, message: string) => void;

/**
 * How long a finished task may take to deliver its log `end` marker. It
 * normally arrives within a millisecond of the result; it never arrives when
 * the handler did not run (a worker that died, a cancel that overtook the
 * task), and then this bounds the wait.
 */
const LOG_END_GRACE_MS = 500;

/** The host side of the tasks' log channel: lines go to the run's logger. */
export function logReceiver(sink: Logger | LineSink) {
  const name = `service-build-log-${randomUUID()}`;
  const channel = new BroadcastChannel(name);
  channel.unref();
  const waiting = new Map<string, () => void>();
  const ended = new Set<string>();
  channel.onmessage = (event: unknown) => {
    const m = (event as { data: LogMessage }).data;
    if (m?.type === 'line') {
      if (typeof sink === 'function') sink(m.key, m.level, m.message);
      else sink.log(m.level, m.message);
    }
    else if (m?.type === 'end') {
      const wake = waiting.get(m.key);
      if (wake) wake();
      else ended.add(m.key);
    }
  };
  return {
    name,
    /** Resolves once `key`'s end marker arrived (or after the grace period). */
    async drained(key: string): Promise<void> {
      if (ended.delete(key)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, LOG_END_GRACE_MS);
        function done() {
          clearTimeout(timer);
          waiting.delete(key);
          resolve();
        }
        waiting.set(key, done);
      });
    },
    close: () => channel.close(),
  };
}

