/**
 * `query` steps: SQL (inline or a `file://` project file)
 * on a database connection, split into statements and run in order by the
 * host's query service. State: `{columns, rows, row_count}` of the last
 * statement, at most 1000 rows kept as objects; `row_count` stays
 * exact.
 */
import { readFile } from 'node:fs/promises';
import { EngineError } from '../../errors.js';
import { fileRefPath, splitQueryStatements, type QueryStep } from '../../jobs/index.js';
import type { StepContext } from '../context.js';
import type { Value } from '../evaluate.js';
import { projectPath } from '../paths.js';

export const QUERY_STATE_ROWS = 1000;

/** A driver value as JSON: bigints as numbers when safe (else text), dates as RFC 3339, bytes as base64. */
export function jsonValue(v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(jsonValue);
  if (typeof v === 'object') {
    const out: Record<string, Value> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: jsonValue(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return String(v);
}

/** A row as an object keyed by column name (a repeated name keeps its last value). */
export function rowObject(columns: readonly string[], row: readonly unknown[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  columns.forEach((c, i) => Object.defineProperty(out, c, { value: jsonValue(row[i]), enumerable: true, writable: true, configurable: true }));
  return out;
}

export async function queryText(raw: string, x: StepContext): Promise<string> {
  const rendered = x.text(raw);
  const ref = fileRefPath(rendered.trim());
  if (ref === undefined) return rendered;
  let content: string;
  try {
    content = await readFile(projectPath(x.projectRoot, ref), 'utf8');
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError('node', `file ${JSON.stringify(ref)} does not exist`);
  }
  return x.text(content);
}

export async function runQuery(step: QueryStep, x: StepContext): Promise<Value> {
  const name = x.text(step.connection);
  const conn = x.connections.get(name);
  if (conn === undefined) throw new EngineError('node', `connection ${name} not found`);
  if (conn.type !== 'postgres' && conn.type !== 'duckdb') throw new EngineError('node', `query connection ${name} must be a database connection`);
  const sql = await queryText(step.query, x);
  const statements = splitQueryStatements(sql, () => ({ line: 1, column: 1 })).map((s) => s.text);
  if (statements.length === 0) throw new EngineError('node', 'query is empty');
  const r = await x.services.query(conn, statements, { signal: x.signal, log: x.log });
  const kept = r.rows.slice(0, QUERY_STATE_ROWS);
  return { columns: [...r.columns], rows: kept.map((row) => rowObject(r.columns, row)), row_count: r.count };
}
