/**
 * Relative `duckdb://` URL paths are relative to the working directory of
 * whatever runs (docs/job-files.md, "Working directories"): a job's is its
 * project root, a pipeline `build` step's is the build project's directory —
 * not the directory the daemon or `service run` was started from. A registry
 * is loaded once per process; these re-resolve such paths for one run.
 */
import { resolve } from 'node:path';
import type { Connection } from './connection.js';
import type { ConnectionRegistry } from './load-connections.js';

export function atWorkingDir(conn: Connection, dir: string): Connection {
  if (conn.type !== 'duckdb' || conn.cwdRelative === undefined) return conn;
  return { ...conn, path: resolve(dir, conn.cwdRelative) };
}

export function registryAtWorkingDir(registry: ConnectionRegistry, dir: string): ConnectionRegistry {
  return {
    ...registry,
    get: (name) => {
      const c = registry.get(name);
      return c === undefined ? undefined : atWorkingDir(c, dir);
    },
    require: (name) => atWorkingDir(registry.require(name), dir),
  };
}
