/**
 * StateStore.ping for a store whose read is synchronous (SQLite on the
 * daemon's own connection: a writer elsewhere never blocks it in WAL mode).
 * The bound cannot be exceeded by waiting, only by a slow disk — reported
 * as a failure past `timeoutMs`, else as the latency.
 */
import { EngineError } from '../errors.js';

export function timedRead(read: () => unknown, timeoutMs: number): number {
  const start = performance.now();
  try {
    read();
  } catch (err) {
    throw new EngineError('connection', `state store unreadable: ${(err as Error).message}`, err);
  }
  const ms = performance.now() - start;
  if (ms > timeoutMs) throw new EngineError('connection', `state store read took ${Math.round(ms)} ms (bound ${timeoutMs} ms)`);
  return ms;
}
