/**
 * One PostgreSQL transaction on a pooled client: BEGIN, the work, COMMIT;
 * ROLLBACK on any failure (a rollback that fails too is ignored: the
 * original error is the one worth reporting), and the client is always
 * released. Shared by the state store and the cluster's coordination.
 */
import type pg from 'pg';

export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await work(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}
