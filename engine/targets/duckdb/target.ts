/**
 * The DuckDB target: sessions are connections on the process-wide instance
 * of the database file (instance-cache.ts). It is single-writer, so
 * the scheduler runs one model at a time; the control path for cancellation
 * is in-process: `cancel(key)` interrupts the session registered under key.
 */
import type { DuckDbConnection } from '../../connections/connection.js';
import { importNear } from '../../lazy-import.js';
import { connectFailed } from '../materialize-errors.js';
import { TARGET_TRAITS } from '../traits.js';
import type { TargetParts } from '../session-parts.js';
import { SqlSession } from '../sql-session.js';
import type { Target, TargetSession } from '../target.js';
import { duckdbDialect } from './dialect.js';
import type { DuckdbDriver } from './driver.js';
import { duckdbInstance } from './instance-cache.js';
import { duckdbIntrospector } from './introspect.js';
import { fullRefresh, view } from './materialize.js';
import { loadSeed } from './seed.js';

const parts: TargetParts<DuckdbDriver> = { dialect: duckdbDialect, introspect: duckdbIntrospector, fullRefresh, view, loadSeed };

let sessionSeq = 0;

class DuckdbTarget implements Target {
  readonly type = 'duckdb' as const;
  readonly singleWriter = TARGET_TRAITS.duckdb.singleWriter;
  readonly name: string;
  readonly defaultSchema: string;
  private readonly sessions = new Map<string, DuckdbDriver>();

  constructor(private readonly conn: DuckDbConnection) {
    this.name = conn.name;
    this.defaultSchema = conn.schema;
  }

  async open(): Promise<TargetSession> {
    let driver: DuckdbDriver;
    try {
      const connection = await (await duckdbInstance(this.conn.path)).connect();
      // Loaded here, with the addon it needs (see instance-cache.ts).
      const { DuckdbDriver } = await importNear<typeof import('./driver.js')>(import.meta.url, './driver.js');
      const key = `duckdb:${++sessionSeq}`;
      driver = new DuckdbDriver(connection, key, () => this.sessions.delete(key));
      this.sessions.set(key, driver);
    } catch (err) {
      throw connectFailed(this.name, err instanceof Error ? err.message : String(err));
    }
    return new SqlSession(driver, parts);
  }

  async cancel(cancelKey: string): Promise<void> {
    await this.sessions.get(cancelKey)?.cancel();
  }

  /** The instance stays open: other targets and probes in this process share it (instance-cache.ts). */
  async close(): Promise<void> {}
}

export function duckdbTarget(conn: DuckDbConnection): Target {
  return new DuckdbTarget(conn);
}
