/**
 * A daemon's lease renewal on a PostgreSQL session of its own
 * (docs/cluster.md, "Leases and fencing"). Never queued behind the pools'
 * work: a table locked by someone else, or a pool full of slow statements,
 * must not stop a healthy daemon from renewing. The server bounds each
 * renewal (`statement_timeout`), so a stalled database fails the beat
 * instead of holding it. A lost session is reopened by the next beat, and a
 * beat that finds its session gone tries once more on a new one at once.
 */
import { isConnectionLoss } from '../targets/postgres/pg-guard.js';
import { OwnSession } from '../targets/postgres/own-session.js';

export type BeatResult = { readonly fenced: true } | { readonly fenced: false; readonly at: Date };

export class HeartbeatSession {
  readonly #session: OwnSession;

  constructor(
    url: string,
    private readonly daemonId: string,
    timeoutMs: number,
  ) {
    const ms = Math.max(100, Math.round(timeoutMs));
    this.#session = new OwnSession(() => ({
      connectionString: url,
      application_name: `service heartbeat ${daemonId}`,
      connectionTimeoutMillis: ms,
      keepAlive: true,
      options: `-c statement_timeout=${ms} -c lock_timeout=${ms}`,
    }));
  }

  /** Renews the lease; `fenced` when a survivor took this daemon over. `at` is the database's clock. */
  async beat(): Promise<BeatResult> {
    try {
      return await this.#beatOnce();
    } catch (err) {
      if (!isConnectionLoss(err) || this.#session.closed) throw err; // a statement error: a new session would not help
      return this.#beatOnce();
    }
  }

  async #beatOnce(): Promise<BeatResult> {
    const client = await this.#session.client();
    const r = await client.query<{ at: Date }>('UPDATE daemons SET heartbeat = clock_timestamp() WHERE id = $1 AND fenced_by IS NULL RETURNING heartbeat AS at', [this.daemonId]);
    const row = r.rows[0];
    return row ? { fenced: false, at: row.at } : { fenced: true };
  }

  async close(): Promise<void> {
    await this.#session.close();
  }
}
