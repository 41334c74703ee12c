/**
 * Pool task `jobfile.validate`: the save-time validation of a large job file
 * (a 400 KB list, a replication with 20,000 streams) on a worker thread, so
 * one save never holds the daemon's event loop for seconds. The worker builds
 * the same validation context the daemon would (the project tree for file
 * references, the project's connections for connection kinds).
 */
import { loadConnections } from '../../engine/connections/index.js';
import { ProjectTree } from '../../engine/files/project-tree.js';
import type { JobFileValidation } from '../../engine/jobs/index.js';
import { jobFileContext, validateContent } from '../../engine/daemon-projects/job-files.js';
import type { TaskHandler } from './task-handler.js';

export interface ValidateJobFileTask {
  readonly type: 'jobfile.validate';
  readonly name: string;
  readonly content: string;
  /** The project's file tree root and env file. */
  readonly root: string;
  readonly envFile: string;
}

/** The whole validation, parsed model included: plain data, cloned across the thread boundary. */
export const validateJobFileTask: TaskHandler<ValidateJobFileTask, JobFileValidation> = async (task) => {
  const ctx = jobFileContext(new ProjectTree(task.root), () => loadConnections({ projectEnvFile: task.envFile }));
  return validateContent(task.name, task.content, ctx);
};
