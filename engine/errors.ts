/**
 * One way to fail: every failure the engine reports is an EngineError with a
 * stable `code`, a human `message` and an optional `cause`. Messages chain
 * outer-first joined with ": ", so a wrapper
 * adds only its own stage text and keeps the cause intact.
 */

export type ErrorCode =
  | 'usage' // bad command line: exit 2
  | 'load' // project path, config file, discovery, front-matter, load-time validation
  | 'config' // config file content (env substitution, defaults validation)
  | 'compile' // render, DAG, selectors
  | 'select'
  | 'target' // no target, unknown connection, unsupported type
  | 'connection' // cannot connect
  | 'node' // a node failed while running
  | 'cancelled'
  | 'bad_request' // project API: invalid input such as a file name (HTTP 400)
  | 'not_found' // project API: unknown file or other resource (HTTP 404)
  | 'conflict' // project API: state conflict, e.g. a directory in the way (HTTP 409)
  | 'forbidden' // project API: a protected change, e.g. renaming a default job (HTTP 403)
  | 'invalid_job_file' // project API: a job file that fails validation (HTTP 422 with problems)
  | 'internal';

export class EngineError extends Error {
  readonly code: ErrorCode;
  override readonly cause?: unknown;
  /** Work that failed part-way but kept what it committed says how many rows that was. */
  committedRows?: number;

  constructor(code: ErrorCode, message: string, cause?: unknown) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
    if (cause !== undefined) this.cause = cause;
  }

  /** Wraps `cause` under a stage prefix, keeping the cause's code unless `code` is given. */
  static wrap(prefix: string, cause: unknown, code?: ErrorCode): EngineError {
    const inner = cause instanceof EngineError ? cause.code : 'internal';
    return new EngineError(code ?? inner, prefix, cause);
  }
}

/** The whole chain as one line-joined text: `outer: inner: innermost`. */
export function errorChain(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  while (cur !== undefined && cur !== null) {
    if (cur instanceof Error) {
      parts.push(cur.message);
      cur = cur instanceof EngineError ? cur.cause : undefined;
    } else {
      parts.push(String(cur));
      cur = undefined;
    }
  }
  return parts.filter((p) => p !== '').join(': ');
}

/** The code of the outermost EngineError in a chain ('internal' otherwise). */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof EngineError ? err.code : 'internal';
}

/** JSON-safe form used when an error crosses a thread or process boundary. */
export interface SerializedError {
  readonly name: string;
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
  /** Rows the failed work had already committed (a ranged incremental run's finished chunks). */
  readonly committedRows?: number;
}

/** Rows committed before `err` was thrown, when the thrower recorded them. */
export function committedRows(err: unknown): number | undefined {
  const n = err instanceof Error ? (err as { committedRows?: unknown }).committedRows : undefined;
  return typeof n === 'number' ? n : undefined;
}

export function serializeError(err: unknown, retryable = false): SerializedError {
  const rows = committedRows(err);
  return { name: err instanceof Error ? err.name : 'Error', code: errorCode(err), message: errorChain(err), retryable, ...(rows !== undefined ? { committedRows: rows } : {}) };
}

/**
 * An EngineError rebuilt from its serialized form on the receiving thread
 * (a pool task's, a render worker's): the same code and message chain, with
 * the sender's error name and retry hint.
 */
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
