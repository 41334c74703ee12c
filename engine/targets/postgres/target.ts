/**
 * The PostgreSQL target: a pool of session connections plus one
 * control connection, opened on first use, that issues
 * `pg_cancel_backend(<pid>)`; a session's cancel key is its pid. Both attach `error` listeners: an idle
 * connection dropped by the server must not crash the process.
 */
import type pg from 'pg';
import { Client, Pool } from './pg-module.js';
import { guardPool } from './pg-guard.js';
import type { PostgresConnection } from '../../connections/connection.js';
import { redact } from '../../connections/redact.js';
import { connectFailed } from '../materialize-errors.js';
import { TARGET_TRAITS } from '../traits.js';
import type { TargetParts } from '../session-parts.js';
import { SqlSession } from '../sql-session.js';
import type { Target, TargetSession } from '../target.js';
import { postgresDialect } from './dialect.js';
import { PostgresDriver, type BackendCanceller } from './driver.js';
import { postgresIntrospector } from './introspect.js';
import { fullRefresh, view } from './materialize.js';
import { loadSeed } from './seed.js';

export interface PostgresTargetOptions {
  /** Session connections kept by the pool; one per worker. Default 4 (the default thread count). */
  readonly poolSize?: number;
  /** Connect timeout; default 10 s. */
  readonly connectTimeoutMs?: number;
}

const parts: TargetParts<PostgresDriver> = { dialect: postgresDialect, introspect: postgresIntrospector, fullRefresh, view, loadSeed };

/** libpq sslmode → node-postgres `ssl`; `allow`/`prefer` connect without TLS (pg has no fallback mode). */
function sslConfig(mode: PostgresConnection['sslmode']): pg.ClientConfig['ssl'] {
  switch (mode) {
    case 'disable':
    case 'allow':
    case 'prefer':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true };
  }
}

/**
 * Run once per new connection: on PostgreSQL 14+ the server checks every 5 s
 * whether the client is still there while a query runs, so a statement of a
 * client that died (a daemon killed with kill -9) is aborted instead of
 * running to its end. Older servers lack the setting; the CASE skips it.
 */
export const CONNECTION_CHECK =
  "SELECT CASE WHEN current_setting('server_version_num')::int >= 140000 THEN set_config('client_connection_check_interval', '5s', false) END";

export function clientConfig(conn: PostgresConnection, connectTimeoutMs = 10_000): pg.ClientConfig {
  return {
    host: conn.host,
    port: conn.port,
    user: conn.user,
    ...(conn.password !== undefined ? { password: conn.password } : {}),
    database: conn.database,
    ssl: sslConfig(conn.sslmode),
    application_name: conn.sessionTag ?? 'service',
    connectionTimeoutMillis: connectTimeoutMs,
    // A peer that vanished without closing the connection is noticed by TCP keepalive.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/** The control connection: lazily opened, reopened after it fails. */
class ControlConnection implements BackendCanceller {
  private client: Promise<pg.Client> | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  async cancelBackend(pid: number): Promise<void> {
    const client = await this.connect();
    await client.query('SELECT pg_cancel_backend($1)', [pid]);
  }

  private connect(): Promise<pg.Client> {
    if (this.client === undefined) {
      const client = new Client(this.config);
      client.on('error', () => {
        this.client = undefined;
      });
      this.client = client.connect().then(
        () => client,
        (err: unknown) => {
          this.client = undefined;
          throw err;
        },
      );
    }
    return this.client;
  }

  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    if (pending !== undefined) await (await pending.catch(() => undefined))?.end().catch(() => {});
  }
}

class PostgresTarget implements Target {
  readonly type = 'postgres' as const;
  readonly singleWriter = TARGET_TRAITS.postgres.singleWriter;
  readonly name: string;
  readonly defaultSchema: string;
  private readonly pool: pg.Pool;
  private readonly control: ControlConnection;
  private readonly secrets: readonly (string | undefined)[];
  /** Open sessions by cancel key, so `cancel(key)` gets the full in-process cancel. */
  private readonly sessions = new Map<string, PostgresDriver>();

  constructor(conn: PostgresConnection, options: PostgresTargetOptions) {
    this.name = conn.name;
    this.defaultSchema = conn.schema;
    this.secrets = [conn.password];
    const config = clientConfig(conn, options.connectTimeoutMs);
    // A client that lost its connection (idle or in use) fails its statement, never the process;
    // the pool discards it and the next open() reconnects.
    this.pool = guardPool(new Pool({ ...config, max: options.poolSize ?? 4 }));
    this.pool.on('connect', (client) => void client.query(CONNECTION_CHECK).catch(() => {}));
    this.control = new ControlConnection(config);
  }

  async open(): Promise<TargetSession> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw connectFailed(this.name, redact(err instanceof Error ? err.message : String(err), this.secrets));
    }
    // node-postgres keeps the backend pid from BackendKeyData; not in its type declarations.
    let pid = (client as unknown as { processID?: number }).processID;
    if (typeof pid !== 'number') pid = Number((await client.query('SELECT pg_backend_pid()')).rows[0]?.pg_backend_pid);
    const key = String(pid);
    const driver = new PostgresDriver(client, pid, this.control, this.secrets, () => this.sessions.delete(key));
    this.sessions.set(key, driver);
    return new SqlSession(driver, parts);
  }

  async cancel(cancelKey: string): Promise<void> {
    const local = this.sessions.get(cancelKey);
    if (local !== undefined) await local.cancel();
    else await this.control.cancelBackend(Number(cancelKey));
  }

  async close(): Promise<void> {
    await this.control.close();
    await this.pool.end();
  }
}

export function postgresTarget(conn: PostgresConnection, options: PostgresTargetOptions = {}): Target {
  return new PostgresTarget(conn, options);
}
