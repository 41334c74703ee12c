/**
 * One project as the services see it: its id, its file tree, the state store
 * and how to validate job files in it. Built per request by ProjectService;
 * holds nothing that outlives the request.
 */
import type { ConnectionRegistry } from '../connections/index.js';
import type { ProjectTree } from '../files/project-tree.js';
import type { JobFileContext } from '../jobs/index.js';
import type { StateStore } from '../state/store.js';
import { jobFileContext } from './job-files.js';

export interface ProjectScope {
  readonly projectId: string;
  readonly tree: ProjectTree;
  readonly store: StateStore;
  readonly connections: () => ConnectionRegistry;
  readonly now: () => Date;
}

export function validationContext(p: ProjectScope): JobFileContext {
  return jobFileContext(p.tree, p.connections);
}
