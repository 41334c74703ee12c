/** The token's project: id, name, git settings (URL redacted) and counts. */
import type { ProjectService } from '../../engine/daemon-projects/index.js';
import { route, type Route } from '../route.js';

export function projectRoutes(deps: { readonly projects: ProjectService }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/project/get',
      summary: "The token's project: git settings (credentials redacted) and counts of files, jobs and executions",
      auth: true,
      handler: ({ projectId }) => deps.projects.project(projectId),
    }),
  ];
}
