/**
 * A daemon's lease renewal on a PostgreSQL session of its own
 * (docs/cluster.md, "Leases and fencing"). Never queued behind the pools'
 * work: a table locked by someone else, or a pool full of slow statements,
 * must not stop a healthy daemon from renewing. The server bounds each
 * renewal (`statement_timeout`), so a stalled database fails the beat
 * instead of holding it. A lost session is reopened by the next beat, and a
 * beat that finds its session gone tries once more on a new one at once.
 */
import type pg from 'pg';
import { isConnectionLoss } from '../targets/postgres/pg-guard.js';
import { Client } from '../targets/postgres/pg-module.js';

export type BeatResult = { readonly fenced: true } | { readonly fenced: false; readonly at: Date };

export class HeartbeatSession {
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(
    private readonly url: string,
    private readonly daemonId: string,
    private readonly timeoutMs: number,
  ) {}

  /** Renews the lease; `fenced` when a survivor took this daemon over. `at` is the database's clock. */
  async beat(): Promise<BeatResult> {
    try {
      return await this.#beatOnce();
    } catch (err) {
      if (!isConnectionLoss(err) || this.#closed) throw err; // a statement error: a new session would not help
      return this.#beatOnce();
    }
  }

  async #beatOnce(): Promise<BeatResult> {
    const client = await this.#connect();
    const r = await client.query<{ at: Date }>('UPDATE daemons SET heartbeat = clock_timestamp() WHERE id = $1 AND fenced_by IS NULL RETURNING heartbeat AS at', [this.daemonId]);
    const row = r.rows[0];
    return row ? { fenced: false, at: row.at } : { fenced: true };
  }

  #connect(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('heartbeat session closed'));
    if (this.#client) return this.#client;
    const ms = Math.max(100, Math.round(this.timeoutMs));
    const client = new Client({
      connectionString: this.url,
      application_name: `service heartbeat ${this.daemonId}`,
      connectionTimeoutMillis: ms,
      keepAlive: true,
      options: `-c statement_timeout=${ms} -c lock_timeout=${ms}`,
    });
    const forget = () => {
      if (this.#client === opened) this.#client = undefined;
    };
    client.on('error', forget);
    client.on('end', forget);
    const opened = client.connect().then(
      () => client,
      (err: unknown) => {
        forget();
        throw err;
      },
    );
    this.#client = opened;
    return opened;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const c = this.#client;
    this.#client = undefined;
    if (c) await c.then((client) => client.end()).catch(() => {});
  }
}
