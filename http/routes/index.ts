/**
 * The daemon's route table: the two public routes (`/health`,
 * `/openapi.json`) and every authenticated one. `/openapi.json` is generated
 * from this same table, so it lists exactly what the server serves.
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import type { ProjectService, RunRequester } from '../../engine/daemon-projects/index.js';
import type { ExecutionRecord, StateStore } from '../../engine/state/store.js';
import { openApiDocument } from '../openapi.js';
import { route, type Route } from '../route.js';
import { connectionRoutes } from './connections.js';
import { executionRoutes } from './executions.js';
import { fileRoutes } from './files.js';
import { jobRoutes } from './jobs.js';
import { projectRoutes } from './project.js';

/** What the routes need from the daemon's ExecutionService. */
export interface ExecutionControl extends RunRequester {
  cancel(projectId: string, execId: string): Promise<ExecutionRecord>;
}

export interface ApiDeps {
  readonly version: string;
  readonly store: StateStore;
  readonly projects: ProjectService;
  readonly executions: ExecutionControl;
  readonly connections: (projectId: string) => ConnectionRegistry;
  /** Authenticated routes owned elsewhere (e.g. `POST /project/git/pull`), served and documented like the rest. */
  readonly extraRoutes?: readonly Route[];
}

export function apiRoutes(deps: ApiDeps): Route[] {
  const authenticated: Route[] = [
    ...connectionRoutes({ connections: deps.connections }),
    ...projectRoutes({ projects: deps.projects }),
    ...fileRoutes({ projects: deps.projects }),
    ...jobRoutes({ projects: deps.projects, runs: deps.executions }),
    ...executionRoutes({ store: deps.store, cancel: (projectId, execId) => deps.executions.cancel(projectId, execId) }),
    ...(deps.extraRoutes ?? []),
  ];
  let openapi: unknown;
  const publicRoutes: Route[] = [
    route({
      method: 'GET',
      path: '/health',
      summary: 'Liveness; does not touch the state store',
      auth: false,
      handler: () => ({ status: 'ok', version: deps.version }),
    }),
    route({
      method: 'GET',
      path: '/openapi.json',
      summary: 'This API as an OpenAPI 3.1 document',
      auth: false,
      handler: () => (openapi ??= openApiDocument(all, deps.version)),
    }),
  ];
  const all = [...publicRoutes, ...authenticated];
  return all;
}
