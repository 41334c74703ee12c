/**
 * The helper thread behind SyncQuery (sync-query.ts), a BlockingThread
 * (engine/threads/blocking-thread.ts): the compiling thread posts a request
 * and blocks until this thread answers it (or ends).
 *
 * PostgreSQL queries run here, on one session kept for the compile. A DuckDB
 * file is queried from a separate process (sync-query-child.ts) kept for the
 * compile instead: a second DuckDB instance of a file in this process (the
 * daemon's actor may hold one) would silently lose data, while another
 * process meets the file's lock and fails with a clear error.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Connection } from '../../../connections/index.js';
import { errorChain } from '../../../errors.js';
import { childNodeArgs, importNear } from '../../../lazy-import.js';
import type { QueryTable } from './query-session.js';
import type { ThreadSide } from '../../../threads/blocking-thread.js';
import type { SyncQueryReply, SyncQueryRequest } from './sync-query-protocol.js';

interface Runner {
  query(sql: string): Promise<QueryTable>;
  close(): Promise<void>;
}

/** Queries answered by a DuckDB query process, one JSON line each way. */
function childRunner(connection: Connection): Runner {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, childNodeArgs(import.meta.url, './sync-query-child.js'), { stdio: 'pipe' });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const waiting: ((line: string | Error) => void)[] = [];
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const lost = (): Error => new Error(stderr.trim().split('\n')[0] || `the query process ended (exit ${String(child.exitCode ?? child.signalCode)})`);
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => waiting.shift()?.(line));
  child.once('close', () => waiting.splice(0).forEach((answer) => answer(lost())));
  child.once('error', (err) => waiting.splice(0).forEach((answer) => answer(err)));
  child.stdin.on('error', () => {}); // a process that died is reported by 'close'
  child.stdin.write(`${JSON.stringify(connection)}\n`);
  return {
    async query(sql) {
      const line = await new Promise<string | Error>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(lost());
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify({ sql })}\n`);
      });
      if (line instanceof Error) throw line;
      const reply = JSON.parse(line) as SyncQueryReply;
      if (!reply.ok) throw new Error(reply.error);
      return { columns: reply.columns ?? [], rows: reply.rows ?? [] };
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * Queries on a session of this thread. The targets' modules load here, on the
 * first query, after the thread marks its end (blocking-thread-entry.ts): a module that fails to
 * load fails that query instead of leaving the compiling thread waiting.
 */
async function threadRunner(connection: Connection): Promise<Runner> {
  const { QuerySession } = await importNear<typeof import('./query-session.js')>(import.meta.url, './query-session.js');
  return new QuerySession(connection);
}

export default function syncQueryThread(side: ThreadSide<Connection>): void {
  const connection = side.data;
  let runner: Runner | undefined;
  side.onRequest((request) => {
    const req = request as SyncQueryRequest;
    void (async () => {
      let reply: SyncQueryReply;
      try {
        if (req.type === 'close') {
          await runner?.close();
          runner = undefined;
          reply = { ok: true };
        } else {
          runner ??= connection.type === 'duckdb' ? childRunner(connection) : await threadRunner(connection);
          reply = { ok: true, ...(await runner.query(req.sql)) };
        }
      } catch (err) {
        reply = { ok: false, error: errorChain(err) };
      }
      side.answer(reply);
    })();
  });
}
