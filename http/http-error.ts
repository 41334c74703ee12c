/**
 * Errors as the API renders them: `{error, code}` with a fixed
 * status per code. Route handlers throw `HttpError`; engine errors are mapped
 * by their code in one place (`toHttpError`), so no handler formats a
 * response body for a failure.
 */
import { EngineError, errorChain } from '../engine/errors.js';

export type ApiCode = 'bad_request' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'payload_too_large' | 'invalid_job_file' | 'too_many_requests' | 'unavailable' | 'internal';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiCode,
    message: string,
    readonly extra?: Readonly<Record<string, unknown>>,
    /**
     * closeConnection: answer with `Connection: close` and close the socket after the response;
     * retryAfter: seconds, sent as `Retry-After` (429, 503).
     */
    readonly options: { readonly closeConnection?: boolean; readonly retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (m: string) => new HttpError(400, 'bad_request', m);
export const notFound = (m: string) => new HttpError(404, 'not_found', m);
export const conflict = (m: string) => new HttpError(409, 'conflict', m);
export const forbidden = (m: string) => new HttpError(403, 'forbidden', m);
/** A client that hung up mid-request: not a server failure, so a 4xx nobody reads, logged as one line. */
export const clientHungUp = () => new HttpError(400, 'bad_request', 'the client closed the connection before its request body ended', undefined, { closeConnection: true });
export const unauthorized = () => new HttpError(401, 'unauthorized', 'missing or invalid project token');

const BY_ENGINE_CODE: Readonly<Record<string, [number, ApiCode]>> = {
  bad_request: [400, 'bad_request'],
  usage: [400, 'bad_request'],
  not_found: [404, 'not_found'],
  conflict: [409, 'conflict'],
  forbidden: [403, 'forbidden'],
  invalid_job_file: [422, 'invalid_job_file'],
};

/** Maps anything thrown by a handler to the HTTP error the client sees. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof EngineError) {
    const hit = BY_ENGINE_CODE[err.code];
    // A job-file error carries its problems into the body.
    const problems = (err as { problems?: unknown }).problems;
    if (hit) return new HttpError(hit[0], hit[1], errorChain(err), problems !== undefined ? { problems } : undefined);
  }
  return new HttpError(500, 'internal', 'internal error');
}
