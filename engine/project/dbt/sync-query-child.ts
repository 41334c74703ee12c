/**
 * The process behind SyncQuery: reads `{connection, sql}` as JSON on stdin,
 * runs the query on the target and writes `{ok, columns, rows}` (or
 * `{ok: false, error}`) as JSON on stdout.
 */
import type { Connection } from '../../connections/index.js';
import { errorChain } from '../../errors.js';
import { closeAllDuckdbInstances, openTarget } from '../../targets/index.js';

/** Plain values for templates: BigInt as number, dates as ISO text. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return String(v);
  return v;
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const { connection, sql } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { connection: Connection; sql: string };
  const target = openTarget(connection);
  let reply: unknown;
  try {
    const session = await target.open();
    try {
      const r = await session.query(sql);
      reply = { ok: true, columns: r.columns, rows: r.rows.map((row) => row.map(plain)) };
    } finally {
      await session.close();
    }
  } catch (err) {
    reply = { ok: false, error: errorChain(err) };
  } finally {
    await target.close().catch(() => {});
    await closeAllDuckdbInstances().catch(() => {});
  }
  process.stdout.write(JSON.stringify(reply));
}

void main();
