/**
 * One database session for compile-time queries, opened on the first query
 * and kept for the rest of the compile: the helper thread
 * (sync-query-worker.ts) and the DuckDB query process (sync-query-child.ts)
 * both run their queries through it.
 */
import type { Connection } from '../../connections/index.js';
import { closeAllDuckdbInstances, openTarget, type Target, type TargetSession } from '../../targets/index.js';

export interface QueryTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/** Plain values for templates: BigInt as number, dates as ISO text. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return String(v);
  return v;
}

export class QuerySession {
  #target: Target | undefined;
  #session: TargetSession | undefined;

  constructor(private readonly connection: Connection) {}

  async query(sql: string): Promise<QueryTable> {
    this.#target ??= openTarget(this.connection);
    // A failed open leaves no session: the next query tries again.
    this.#session ??= await this.#target.open();
    const r = await this.#session.query(sql);
    return { columns: r.columns, rows: r.rows.map((row) => row.map(plain)) };
  }

  /** Closes the session, the target and (DuckDB) the file. */
  async close(): Promise<void> {
    const session = this.#session;
    const target = this.#target;
    this.#session = undefined;
    this.#target = undefined;
    await session?.close().catch(() => {});
    await target?.close().catch(() => {});
    if (this.connection.type === 'duckdb') await closeAllDuckdbInstances().catch(() => {});
  }
}
