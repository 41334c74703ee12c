/**
 * One log channel for the daemon's pool tasks: each running task gets a key,
 * and its lines are routed to that task's sink (its live output). Built on
 * the shared log receiver (actors/log-receiver.ts). `output` is the live
 * feed of what the sinks write, for watchers of a running execution.
 */
import { randomUUID } from 'node:crypto';
import { logReceiver } from '../log-receiver.js';
import type { LogRoute } from '../pool-tasks/forwarding-logger.js';
import { OutputFeed } from './output-feed.js';

export interface LineRouter {
  open(sink: (line: string) => void): { readonly route: LogRoute; close(): Promise<void> };
  close(): void;
  /** Task and step output as it is written (see output-feed.ts). */
  readonly output: OutputFeed;
}

export function lineRouter(): LineRouter {
  const sinks = new Map<string, (line: string) => void>();
  const receiver = logReceiver((key, _level, message) => sinks.get(key)?.(message));
  return {
    open(sink) {
      const key = randomUUID();
      sinks.set(key, sink);
      return {
        route: { channel: receiver.name, key },
        async close() {
          await receiver.drained(key);
          sinks.delete(key);
        },
      };
    },
    close: () => receiver.close(),
    output: new OutputFeed(),
  };
}
