/**
 * Errors crossing a thread boundary travel as `SerializedError`
 * (`{name, code, message, retryable}`) and are rebuilt here as an
 * EngineError on the receiving side, so callers keep matching on `code` and
 * the supervisor can still see whether a retry makes sense.
 */
import type { SerializedError } from '../engine/errors.js';
import { EngineError } from '../engine/errors.js';

/** An EngineError rebuilt from its serialized form; keeps the sender's error name and retry hint. */
export class RemoteTaskError extends EngineError {
  readonly retryable: boolean;
  /** `name` of the error as it was thrown on the other side (`EngineError`, `TypeError`, …). */
  readonly remoteName: string;

  constructor(serialized: SerializedError) {
    super(serialized.code, serialized.message);
    this.retryable = serialized.retryable;
    this.remoteName = serialized.name;
    if (serialized.committedRows !== undefined) this.committedRows = serialized.committedRows;
  }
}

export function rebuildError(serialized: SerializedError): RemoteTaskError {
  return new RemoteTaskError(serialized);
}

/** Whether an error says that running the same work again may succeed. */
export function isRetryable(err: unknown): boolean {
  return err instanceof Error && (err as { retryable?: unknown }).retryable === true;
}
