/**
 * Connection test, shared by `POST /connection/test` and the
 * local `service conns test`: a database connection opens with a 10 s
 * timeout and runs `select 1`; a file connection lists its root folder; an
 * unsupported type is invalid. The result is data, never a thrown error.
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { EngineError, errorChain } from '../errors.js';
import { openTarget } from '../targets/index.js';
import type { TargetSession } from '../targets/target.js';
import type { Connection } from './connection.js';
import type { ConnectionRegistry } from './load-connections.js';

export const TEST_TIMEOUT_MS = 10_000;

export type ConnectionTest = { readonly valid: true } | { readonly valid: false; readonly error: string };

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * Work on a session of a DuckDB file, given by a host that owns the file
 * elsewhere (the daemon's DuckDB actors: a second instance of the file in
 * the same process would lose data).
 */
export type DuckdbSessions = <T>(conn: Connection, work: (session: TargetSession) => Promise<T>) => Promise<T>;

async function probe(conn: Connection, duckdb: DuckdbSessions | undefined): Promise<void> {
  if (conn.type === 'file') {
    await withTimeout(readdir(fileURLToPath(conn.url)), TEST_TIMEOUT_MS, 'listing');
    return;
  }
  if (conn.type === 'duckdb' && duckdb !== undefined) {
    await withTimeout(duckdb(conn, (session) => session.countQuery('select 1')), TEST_TIMEOUT_MS + 500, 'connect');
    return;
  }
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

export async function testConnection(conn: Connection, registry: ConnectionRegistry, duckdb?: DuckdbSessions): Promise<ConnectionTest> {
  if (conn.type === 'unsupported') return { valid: false, error: `unsupported connection type ${conn.declaredType}` };
  try {
    await probe(conn, duckdb);
    return { valid: true };
  } catch (err) {
    // The target already says `could not connect to '<t>'`: keep only its cause.
    const detail = err instanceof EngineError && err.code === 'connection' && err.cause !== undefined ? err.cause : err;
    return { valid: false, error: `could not connect to ${conn.name}: ${registry.redact(errorChain(detail))}` };
  }
}
