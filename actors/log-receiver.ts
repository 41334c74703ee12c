/**
 * The host side of a pool task's log channel: worker tasks post their log
 * lines, in batches (tasks/forwarding-logger.ts), on a BroadcastChannel (not the worker's own stderr), because the host
 * may be the CLI, a pipeline step or the daemon, each capturing its own log.
 *
 * Lines travel apart from the task's result, so the result can arrive first.
 * The outcome carries how many lines the task posted; the pool hands that
 * count to the receiver (`expectLines`), and `drained(key)` resolves once
 * that many lines of the key arrived — at once for the usual task that logged
 * nothing, with no extra message per task.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import type { Level, Logger } from '../engine/log.js';
import type { LogMessage, LogRoute } from './pool-tasks/forwarding-logger.js';

export type LineSink = (key: string, level: Level, message: string) => void;

/**
 * How long `drained` waits when no count was handed over: the handler did
 * not run to its end (a worker that died), so the count never came.
 */
const LOG_END_GRACE_MS = 500;

interface Receiver {
  expect(key: string, lines: number): void;
}

/** Receivers of this thread by channel name, for `expectLines`. */
const receivers = new Map<string, Receiver>();

/** The pool got a task's outcome: it posted `lines` lines on `route`. */
export function expectLines(route: LogRoute, lines: number): void {
  receivers.get(route.channel)?.expect(route.key, lines);
}

/** The host side of the tasks' log channel: lines go to the run's logger. */
export function logReceiver(sink: Logger | LineSink) {
  const name = `service-build-log-${randomUUID()}`;
  const channel = new BroadcastChannel(name);
  channel.unref();
  const received = new Map<string, number>();
  const expected = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const complete = (key: string) => {
    const want = expected.get(key);
    return want !== undefined && (received.get(key) ?? 0) >= want;
  };
  channel.onmessage = (event: unknown) => {
    const m = (event as { data: LogMessage }).data;
    if (m?.type !== 'lines') return;
    for (const line of m.lines) {
      if (typeof sink === 'function') sink(line.key, line.level, line.message);
      else sink.log(line.level, line.message);
      received.set(line.key, (received.get(line.key) ?? 0) + 1);
      if (complete(line.key)) waiting.get(line.key)?.();
    }
  };
  receivers.set(name, {
    expect(key, lines) {
      expected.set(key, lines);
      if (complete(key)) waiting.get(key)?.();
    },
  });
  const forget = (key: string) => {
    received.delete(key);
    expected.delete(key);
    waiting.delete(key);
  };
  return {
    name,
    /** Resolves once every line of `key` arrived (or after the grace period when its count never came). */
    async drained(key: string): Promise<void> {
      if (!complete(key)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, LOG_END_GRACE_MS);
          function done() {
            clearTimeout(timer);
            resolve();
          }
          waiting.set(key, done);
        });
      }
      forget(key);
    },
    /** Drops what is known of `key` (a task that never ran). */
    forget,
    close: () => {
      receivers.delete(name);
      channel.close();
    },
  };
}
