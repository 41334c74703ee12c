/**
 * Execution tags on database sessions. Every PostgreSQL session the daemon
 * opens for an execution carries `application_name = 'service exec <id>'`, so
 * after a crash the restarted daemon can find the backends of the executions
 * it marks interrupted (pg_stat_activity) and terminate them, instead of
 * leaving their queries running for hours.
 */
import type { Connection } from '../connections/connection.js';
import type { ConnectionRegistry } from '../connections/load-connections.js';

export const sessionTag = (execId: string): string => `service exec ${execId}`;

export function tagConnection(conn: Connection, tag: string): Connection {
  return conn.type === 'postgres' ? { ...conn, sessionTag: tag } : conn;
}

export function registryWithSessionTag(registry: ConnectionRegistry, tag: string): ConnectionRegistry {
  return {
    ...registry,
    get: (name) => {
      const c = registry.get(name);
      return c === undefined ? undefined : tagConnection(c, tag);
    },
    require: (name) => tagConnection(registry.require(name), tag),
  };
}
