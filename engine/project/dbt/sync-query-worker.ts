/**
 * The helper thread behind SyncQuery (sync-query.ts). The compiling thread
 * posts a request on `port` and blocks in `Atomics.wait` on `state[0]`; this
 * thread answers on the port, then stores the request's sequence number in
 * `state[0]` and wakes it. If this thread ends, it stores DEAD there, so the
 * compiling thread never waits on a thread that will not answer.
 *
 * PostgreSQL queries run here, on one session kept for the compile. A DuckDB
 * file is queried from a separate process (sync-query-child.ts) kept for the
 * compile instead: a second DuckDB instance of a file in this process (the
 * daemon's actor may hold one) would silently lose data, while another
 * process meets the file's lock and fails with a clear error.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { workerData } from 'node:worker_threads';
import type { Connection } from '../../connections/index.js';
import { errorChain } from '../../errors.js';
import { childNodeArgs, importNear } from '../../lazy-import.js';
import type { QueryTable } from './query-session.js';
import { DEAD, type SyncQueryData, type SyncQueryReply, type SyncQueryRequest } from './sync-query-protocol.js';

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
 * first query, after the exit hook below is in place: a module that fails to
 * load fails that query instead of leaving the compiling thread waiting.
 */
async function threadRunner(connection: Connection): Promise<Runner> {
  const { QuerySession } = await importNear<typeof import('./query-session.js')>(import.meta.url, './query-session.js');
  return new QuerySession(connection);
}

const { port, state, connection } = workerData as SyncQueryData;
let runner: Runner | undefined;

function answer(seq: number, reply: SyncQueryReply): void {
  port.postMessage(reply);
  Atomics.store(state, 0, seq);
  Atomics.notify(state, 0);
}

process.on('exit', () => {
  Atomics.store(state, 0, DEAD);
  Atomics.notify(state, 0);
});

port.on('message', (req: SyncQueryRequest) => {
  void (async () => {
    try {
      if (req.type === 'close') {
        await runner?.close();
        runner = undefined;
        answer(req.seq, { ok: true });
        port.close();
        return;
      }
      runner ??= connection.type === 'duckdb' ? childRunner(connection) : await threadRunner(connection);
      const table = await runner.query(req.sql);
      answer(req.seq, { ok: true, ...table });
    } catch (err) {
      answer(req.seq, { ok: false, error: errorChain(err) });
    }
  })();
});
