/**
 * The project API's domain service: one object the HTTP
 * routes call with the token's project id. Each call builds the project's
 * scope (tree at `<dataDir>/projects/<id>/files`, the store, its connections)
 * and delegates to the file and job modules. It also loads job files for
 * the ExecutionService (`loadJobFile`).
 */
import type { ConnectionRegistry } from '../connections/index.js';
import type { ProjectFile } from '../files/file-entry.js';
import { ProjectTree, type ListOptions, type SaveInput } from '../files/project-tree.js';
import type { JobFileValidation } from '../jobs/index.js';
import type { Logger } from '../log.js';
import type { StateStore, Trigger } from '../state/store.js';
import { fileForReading, type FileForReading } from './file-read.js';
import * as files from './file-service.js';
import type { JobInput } from './job-input.js';
import * as jobs from './job-service.js';
import type { JobView } from './job-view.js';
import { loadJobFile, type LoadedJobFile } from './load-job-file.js';
import { projectPaths } from './project-paths.js';
import type { ProjectScope } from './project-scope.js';
import { projectView, type ProjectView } from './project-view.js';

export interface ProjectServiceDeps {
  readonly dataDir: string;
  readonly store: StateStore;
  /** The registry of a project's connections (its env file, the host env file, URL variables). */
  readonly connections: (projectId: string) => ConnectionRegistry;
  /** Injected clock for `next_run`. */
  readonly now?: () => Date;
  readonly logger?: Logger;
  /** Large job files are validated here (the worker pool) instead of on the event loop. */
  readonly validateOffThread?: (projectId: string, name: string, content: string) => Promise<JobFileValidation>;
  /**
   * Called after a save, delete or rename changed the tree, with the touched
   * names, before the caller gets its answer (cluster mode publishes them).
   */
  readonly onFilesChanged?: (projectId: string, change: { action: string; paths: readonly string[] }) => Promise<void>;
  /**
   * Called before the project's files are read or changed (cluster mode brings
   * the local copy up to the shared version first: a save through another
   * daemon is seen by the next request here).
   */
  readonly refresh?: (projectId: string) => Promise<void>;
}

export class ProjectService {
  readonly #deps: ProjectServiceDeps;

  constructor(deps: ProjectServiceDeps) {
    this.#deps = deps;
  }

  scope(projectId: string): ProjectScope {
    const d = this.#deps;
    return {
      projectId,
      tree: new ProjectTree(projectPaths(d.dataDir, projectId).files),
      store: d.store,
      connections: () => d.connections(projectId),
      now: d.now ?? (() => new Date()),
      ...(d.logger ? { logger: d.logger } : {}),
      ...(d.validateOffThread ? { validateOffThread: (name: string, content: string) => d.validateOffThread!(projectId, name, content) } : {}),
    };
  }

  /** `read` after the refresh hook, when there is one (no extra await on a single daemon). */
  #fresh<T>(projectId: string, read: () => Promise<T>): Promise<T> {
    const refresh = this.#deps.refresh;
    return refresh ? refresh(projectId).then(read) : read();
  }

  project(projectId: string): Promise<ProjectView> {
    return this.#fresh(projectId, () => projectView(this.scope(projectId), this.#deps.store));
  }

  getFile(projectId: string, name: string): Promise<ProjectFile> {
    return this.#fresh(projectId, () => files.getFile(this.scope(projectId), name));
  }

  /** A file for an answer: whole when small, its entry and path (to stream) when large. */
  fileForReading(projectId: string, name: string): Promise<FileForReading> {
    return this.#fresh(projectId, () => fileForReading(this.scope(projectId), name));
  }

  listFiles(projectId: string, options: ListOptions): Promise<ProjectFile[]> {
    return this.#fresh(projectId, () => files.listFiles(this.scope(projectId), options));
  }

  async #changed<T>(projectId: string, action: string, paths: readonly string[], change: () => Promise<T>): Promise<T> {
    await this.#deps.refresh?.(projectId);
    const out = await change();
    await this.#deps.onFilesChanged?.(projectId, { action, paths });
    return out;
  }

  saveFile(projectId: string, input: SaveInput): Promise<files.SaveFileResult> {
    const save = () => files.saveFile(this.scope(projectId), input);
    return this.#deps.onFilesChanged ? this.#changed(projectId, 'save', [input.name], save) : save();
  }

  deleteFile(projectId: string, name: string): Promise<files.DeleteFileResult> {
    const del = () => files.deleteFile(this.scope(projectId), name);
    return this.#deps.onFilesChanged ? this.#changed(projectId, 'delete', [name], del) : del();
  }

  renameFile(projectId: string, oldName: string, newName: string): Promise<files.RenameFileResult> {
    const rename = () => files.renameFile(this.scope(projectId), oldName, newName);
    return this.#deps.onFilesChanged ? this.#changed(projectId, 'rename', [oldName, newName], rename) : rename();
  }

  listJobs(projectId: string, filter: jobs.JobFilter): Promise<JobView[]> {
    return jobs.listJobs(this.scope(projectId), filter);
  }

  getJob(projectId: string, jobId: string): Promise<JobView> {
    return jobs.getJob(this.scope(projectId), jobId);
  }

  saveJob(projectId: string, input: JobInput): Promise<JobView> {
    return this.#fresh(projectId, () => jobs.saveJob(this.scope(projectId), input));
  }

  deleteJob(projectId: string, jobId: string): Promise<{ job_id: string; deleted: true }> {
    return jobs.deleteJob(this.scope(projectId), jobId);
  }

  runJob(projectId: string, runs: jobs.RunRequester, req: jobs.RunRequest, trigger: Trigger): Promise<string> {
    return this.#fresh(projectId, () => jobs.runJob(this.scope(projectId), runs, req, trigger));
  }

  /** For ExecutionDeps.loadJobFile. */
  loadJobFile(projectId: string, fileName: string): Promise<LoadedJobFile> {
    return loadJobFile(this.scope(projectId), fileName);
  }
}
