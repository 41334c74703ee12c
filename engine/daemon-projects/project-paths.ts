/**
 * Where a project lives under the daemon's data dir:
 * `projects/<project_id>/files/` is the project root, `env.yaml` beside it
 * holds the project's connections, `git/` the git metadata.
 */
import path from 'node:path';

export interface ProjectPaths {
  /** `<dataDir>/projects/<project_id>` */
  readonly dir: string;
  /** The project root: every file name of the API is relative to it. */
  readonly files: string;
  /** The project env file: never served, listed or written by the file API. */
  readonly envFile: string;
  readonly git: string;
}

export function projectPaths(dataDir: string, projectId: string): ProjectPaths {
  const dir = path.join(path.resolve(dataDir), 'projects', projectId);
  return { dir, files: path.join(dir, 'files'), envFile: path.join(dir, 'env.yaml'), git: path.join(dir, 'git') };
}
