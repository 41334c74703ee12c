/**
 * A lost PostgreSQL connection fails the work in flight, never the process.
 * node-postgres emits 'error' on a client whose connection ends (a server
 * restart, `pg_terminate_backend`, a network cut); an 'error' event nobody
 * listens to throws and ends the process. A pool listens to its idle
 * clients only — a client checked out (a transaction, a session) has no
 * listener while it is out. `guardPool` gives every client the pool opens a
 * listener for its whole life: the statement in flight still rejects with
 * the connection's error (node-postgres fails every queued query of a
 * broken client), the pool drops the broken client when it is released,
 * and the next checkout opens a new connection.
 */
import type pg from 'pg';

const ignore = (): void => {};

export function guardPool<P extends pg.Pool>(pool: P, onIdleError: (err: Error) => void = ignore): P {
  pool.on('error', onIdleError);
  pool.on('connect', (client) => client.on('error', ignore));
  return pool;
}

/**
 * True for an error that says the connection (not the statement) failed:
 * no SQLSTATE (the socket closed, a connect timed out), class 08 (connection
 * exception), 57P01–57P03 (the server ended the session: terminated, shut
 * down, not yet accepting) or 53300 (too many connections). Work that failed
 * this way may succeed on a new connection; a statement error would not.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (code === undefined) return err instanceof Error;
  if (typeof code !== 'string') return false;
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300' || /^E(CONN|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH)/.test(code);
}
