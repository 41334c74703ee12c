/**
 * The process behind compile-time queries on a DuckDB file (see
 * sync-query-worker.ts for why a process): reads JSON lines on stdin — the
 * connection first, then one `{sql}` per query — and answers each query with
 * one JSON line on stdout, `{ok, columns, rows}` or `{ok: false, error}`.
 * The file stays open until stdin ends; then it is closed and the process
 * exits, so the run that follows can lock it.
 */
import { createInterface } from 'node:readline';
import type { Connection } from '../../../connections/index.js';
import { errorChain } from '../../../errors.js';
import { QuerySession } from './query-session.js';

async function main(): Promise<void> {
  let session: QuerySession | undefined;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (session === undefined) {
      session = new QuerySession(JSON.parse(line) as Connection);
      continue;
    }
    const { sql } = JSON.parse(line) as { sql: string };
    let reply: unknown;
    try {
      reply = { ok: true, ...(await session.query(sql)) };
    } catch (err) {
      reply = { ok: false, error: errorChain(err) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
  await session?.close();
}

void main();
