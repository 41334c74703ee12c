/**
 * Errors crossing a thread boundary travel as `SerializedError`
 * (`{name, code, message, retryable}`) and are rebuilt here as an
 * EngineError on the receiving side, so callers keep matching on `code` and
 * the supervisor can still see whether a retry makes sense (the class lives
 * in engine/errors.ts: render workers rebuild their errors with it too).
 */
export { RemoteTaskError, rebuildError } from '../engine/errors.js';

/** Whether an error says that running the same work again may succeed. */
export function isRetryable(err: unknown): boolean {
  return err instanceof Error && (err as { retryable?: unknown }).retryable === true;
}
