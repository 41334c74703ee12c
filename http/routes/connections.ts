/**
 * Connections (api.md §4.3, §4.4): the project's env file, the host env file
 * and URL environment variables; never secrets. A test opens a database
 * connection with a 10 s timeout and runs `select 1`, or lists a file
 * connection's root folder.
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { object, string } from 'superstruct';
import type { ConnectionRegistry } from '../../engine/connections/index.js';
import { EngineError, errorChain } from '../../engine/errors.js';
import { openTarget } from '../../engine/targets/index.js';
import { notFound } from '../http-error.js';
import { route, type Route } from '../route.js';

export const TEST_TIMEOUT_MS = 10_000;

export interface ConnectionsDeps {
  readonly connections: (projectId: string) => ConnectionRegistry;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
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
        try {
          if (conn.type === 'file') {
            await withTimeout(readdir(fileURLToPath(conn.url)), TEST_TIMEOUT_MS, 'listing');
          } else if (conn.type === 'unsupported') {
            return { valid: false, error: `unsupported connection type ${conn.declaredType}` };
          } else {
            const target = openTarget(conn, { connectTimeoutMs: TEST_TIMEOUT_MS, poolSize: 1 });
            try {
              const session = await withTimeout(target.open(), TEST_TIMEOUT_MS + 500, 'connect');
              try {
                await withTimeout(session.countQuery('select 1'), TEST_TIMEOUT_MS, 'select 1');
              } finally {
                await session.close().catch(() => {});
              }
            } finally {
              await target.close().catch(() => {});
            }
          }
          return { valid: true };
        } catch (err) {
          // The target already says `could not connect to '<t>'`: keep only its cause.
          const detail = err instanceof EngineError && err.code === 'connection' && err.cause !== undefined ? err.cause : err;
          return { valid: false, error: `could not connect to ${conn.name}: ${registry.redact(errorChain(detail))}` };
        }
      },
    }),
  ];
}
