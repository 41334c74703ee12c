/**
 * Renders the project domain's own failures (engine/projects): a forbidden
 * change is 403 `forbidden`, an invalid job file 422 `invalid_job_file` with
 * its problems. Every other error goes through toHttpError as usual.
 */
import { ForbiddenError, InvalidJobFileError } from '../../engine/projects/index.js';
import { HttpError } from '../http-error.js';

export function projectHttpError(err: unknown): unknown {
  if (err instanceof ForbiddenError) return new HttpError(403, 'forbidden', err.message);
  if (err instanceof InvalidJobFileError) return new HttpError(422, 'invalid_job_file', err.message, { problems: err.problems });
  return err;
}

/** Runs a handler body, mapping the domain's 403/422 errors. */
export async function mapProjectErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw projectHttpError(err);
  }
}
