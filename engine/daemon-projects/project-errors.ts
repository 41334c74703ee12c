/**
 * The project domain's failures, as EngineErrors with the codes the HTTP
 * layer maps to statuses: a forbidden change (403) and a job file that fails
 * validation (422, carrying its problems).
 */
import { EngineError } from '../errors.js';
import type { Problem } from '../jobs/index.js';

/** 403: changing a default job's protected fields, deleting a default job directly. */
export class ForbiddenError extends EngineError {
  constructor(message: string) {
    super('forbidden', message);
    this.name = 'ForbiddenError';
  }
}

/** 422 `invalid job file <name>` with every problem. */
export class InvalidJobFileError extends EngineError {
  constructor(
    readonly fileName: string,
    readonly problems: readonly Problem[],
  ) {
    super('invalid_job_file', `invalid job file ${fileName}`);
    this.name = 'InvalidJobFileError';
  }
}

const quote = (s: string): string => JSON.stringify(s);

export const badRequest = (message: string): EngineError => new EngineError('bad_request', message);
export const notFound = (message: string): EngineError => new EngineError('not_found', message);
export const conflict = (message: string): EngineError => new EngineError('conflict', message);

export const fileNotFound = (name: string): EngineError => notFound(`file ${quote(name)} not found`);
export const jobNotFound = (id: string): EngineError => notFound(`job ${id} not found`);
export const activeExecutions = (id: string): EngineError => conflict(`job ${id} has active executions`);
