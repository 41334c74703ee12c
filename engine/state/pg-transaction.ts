/**
 * One PostgreSQL transaction on a pooled client: BEGIN, the work, COMMIT;
 * ROLLBACK on any failure (a rollback that fails too is ignored: the
 * original error is the one worth reporting), and the client is always
 * released (discarded when its connection was lost). Shared by the state store and the cluster's coordination.
 */
import type pg from 'pg';

export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken = false;
  try {
    await c.query('BEGIN');
    const out = await work(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    // A client whose ROLLBACK fails too (its connection was lost) is discarded, not pooled.
    broken = await c.query('ROLLBACK').then(
      () => false,
      () => true,
    );
    throw err;
  } finally {
    c.release(broken);
  }
}
