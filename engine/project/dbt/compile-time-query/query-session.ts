/**
 * One database session for compile-time queries, opened on the first query
 * and kept for the rest of the compile: the helper thread
 * (sync-query-worker.ts) and the DuckDB query process (sync-query-child.ts)
 * both run their queries through it.
 */
import type { Connection } from '../../../connections/index.js';
import { importNear } from '../../../lazy-import.js';
import { closeAllDuckdbInstances, openTarget, type Target, type TargetSession } from '../../../targets/index.js';

export interface QueryTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * dbt hands templates query results as agate tables, whose integer and
 * decimal columns hold numbers (`3 == 3`, not `'3' == 3`). pg returns int8
 * and numeric as text; in this session's thread (the compile-time query
 * helper) they are parsed as numbers when the number is exact, else kept as text.
 */
let numbersParsed = false;
async function parseNumbers(): Promise<void> {
  if (numbersParsed) return;
  numbersParsed = true;
  const { types: pgTypes } = await importNear<typeof import('../../../targets/postgres/pg-module.js')>(import.meta.url, '../../../targets/postgres/pg-module.js');
  const exact = (text: string): number | string => {
    const n = Number(text);
    return Number.isFinite(n) && (Number.isSafeInteger(n) || !/^-?\d+$/.test(text)) && Math.abs(n) < 2 ** 53 ? n : text;
  };
  pgTypes.setTypeParser(20, exact); // int8
  pgTypes.setTypeParser(1700, exact); // numeric
}

/** Plain values for templates: BigInt as number, dates as ISO text. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    // DuckDB's DECIMAL arrives as an object: a number, as in dbt's agate tables.
    const text = String(v);
    return /^-?\d+(\.\d+)?$/.test(text) && Math.abs(Number(text)) < 2 ** 53 ? Number(text) : text;
  }
  return v;
}

export class QuerySession {
  #target: Target | undefined;
  #session: TargetSession | undefined;

  constructor(private readonly connection: Connection) {}

  async query(sql: string): Promise<QueryTable> {
    if (this.connection.type === 'postgres') await parseNumbers();
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
