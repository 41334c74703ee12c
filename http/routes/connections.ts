/**
 * Connections: the project's env file, the host env file
 * and URL environment variables; never secrets. A test opens a database
 * connection with a 10 s timeout and runs `select 1`, or lists a file
 * connection's root folder.
 */
import { object, string } from 'superstruct';
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import { withConnectionSession } from '../../actors/connection-session.js';
import { testConnection } from '../../engine/connections/test-connection.js';
import { notFound } from '../http-error.js';
import { route, type Route } from '../route.js';

export interface ConnectionsDeps {
  readonly connections: (projectId: string) => ConnectionRegistry;
}

export function connectionRoutes(deps: ConnectionsDeps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/connection/list',
      summary: 'List the connections the project may use (name, type, kind, source)',
      auth: true,
      handler: ({ projectId }) => ({ connections: deps.connections(projectId).list() }),
    }),
    route({
      method: 'POST',
      path: '/connection/test',
      summary: 'Test one connection (database: connect and select 1; file: list the root folder)',
      auth: true,
      body: object({ name: string() }),
      handler: async ({ projectId }, body) => {
        const registry = deps.connections(projectId);
        const conn = registry.get(body.name);
        if (!conn) throw notFound(`connection ${body.name} not found`);
        // A DuckDB file is tested through its actor, the daemon's one owner of the file.
        return testConnection(conn, registry, (c, work) => withConnectionSession(c, undefined, work));
      },
    }),
  ];
}
