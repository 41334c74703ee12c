/** The project API's domain: files with their job side effects, jobs, run requests. */
export { ProjectService, type ProjectServiceDeps } from './project-service.js';
export { projectPaths, type ProjectPaths } from './project-paths.js';
export { ForbiddenError, InvalidJobFileError } from './project-errors.js';
export type { JobInput, JobConfigInput } from './job-input.js';
export type { JobView } from './job-view.js';
export type { RunOverrides, RunRequest, RunRequester, JobFilter } from './job-service.js';
export type { LoadedJobFile } from './load-job-file.js';
export type { SaveFileResult, DeleteFileResult, RenameFileResult } from './file-service.js';
export type { ProjectView } from './project-view.js';
export { redactGitUrl } from './project-view.js';
export { STREAM_FILE_BYTES, type FileForReading } from './file-read.js';
