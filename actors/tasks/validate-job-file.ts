/**
 * Pool task `jobfile.validate`: the save-time validation of a large job file
 * (a 400 KB list, a replication with 20,000 streams) on a worker thread, so
 * one save never holds the daemon's event loop for seconds. The worker builds
 * the same validation context the daemon would (the project tree for file
 * references, the project's connections for connection kinds).
 */
import { loadConnections } from '../../engine/connections/index.js';
import { ProjectTree } from '../../engine/files/project-tree.js';
import type { Problem } from '../../engine/jobs/problem.js';
import { jobFileContext, validateContent } from '../../engine/projects/job-files.js';
import type { TaskHandler } from './task-handler.js';

export interface ValidateJobFileTask {
  readonly type: 'jobfile.validate';
  readonly name: string;
  readonly content: string;
  /** The project's file tree root and env file. */
  readonly root: string;
  readonly envFile: string;
}

export interface ValidateJobFileResult {
  readonly kind: ReturnType<typeof validateContent>['kind'];
  readonly problems: readonly Problem[];
}

export const validateJobFileTask: TaskHandler<ValidateJobFileTask, ValidateJobFileResult> = async (task) => {
  const ctx = jobFileContext(new ProjectTree(task.root), () => loadConnections({ projectEnvFile: task.envFile }));
  const v = validateContent(task.name, task.content, ctx);
  return { kind: v.kind, problems: v.problems };
};
