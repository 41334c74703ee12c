/**
 * The daemon's route table: the two public routes (`/health`, which probes
 * the state store, and `/openapi.json`) and every authenticated one. `/openapi.json` is generated
 * from this same table, so it lists exactly what the server serves.
 */
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import type { ProjectService, RunRequester } from '../../engine/daemon-projects/index.js';
import type { ExecutionRecord, StateStore } from '../../engine/state/store.js';
import { StoreProbe, type StoreHealth } from '../health.js';
import { HttpError } from '../http-error.js';
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
  /** What `/health` reports about the store; default: a probe of `store` (http/health.ts). */
  readonly storeHealth?: () => Promise<StoreHealth>;
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
  const probe = new StoreProbe(deps.store);
  const storeHealth = deps.storeHealth ?? (() => probe.check());
  const publicRoutes: Route[] = [
    route({
      method: 'GET',
      path: '/health',
      summary: 'Liveness and the state store: 503 while the daemon starts and when a read of the store takes over 1 s',
      auth: false,
      handler: async () => {
        const store = await storeHealth();
        if (store.reachable) return { status: 'ok', version: deps.version, store };
        throw new HttpError(503, 'unavailable', `the state store is not answering: ${store.error}`, { status: 'unavailable', version: deps.version, store }, { retryAfter: 1 });
      },
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
