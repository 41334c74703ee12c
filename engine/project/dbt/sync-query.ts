/**
 * Queries during template rendering (`run_query`, `adapter.get_relation`,
 * `{% call statement %}`). Templates render synchronously, so this thread
 * posts each query to a helper thread (sync-query-worker.ts) and blocks in
 * `Atomics.wait` until the answer is on the port. The helper starts on the
 * first query and keeps its session (or, for DuckDB, its query process) for
 * the rest of the compile, so a project with many such queries pays one
 * connection, not one process start per query. A project that never queries
 * at compile time starts no thread and opens no connection; `close()` at the
 * end of the compile closes the session and, on DuckDB, the file before the
 * run opens it.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Connection } from '../../connections/index.js';
import { EngineError } from '../../errors.js';
import { workerEntryUrl } from '../../lazy-import.js';
import type { QueryTable } from './query-session.js';
import { DEAD, type SyncQueryData, type SyncQueryReply, type SyncQueryRequest } from './sync-query-protocol.js';

export type { QueryTable } from './query-session.js';

const QUERY_TIMEOUT_MS = 300_000;
/** Closing waits this long for the session (and the DuckDB file) to close. */
const CLOSE_TIMEOUT_MS = 30_000;

interface Helper {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly state: Int32Array;
  seq: number;
}

export class SyncQuery {
  #helper: Helper | undefined;

  constructor(private readonly connection: Connection) {}

  query(sql: string): QueryTable {
    const reply = this.#ask({ type: 'query', sql }, QUERY_TIMEOUT_MS);
    if (!reply.ok) throw new EngineError('compile', `query failed: ${reply.error}`);
    return { columns: reply.columns ?? [], rows: reply.rows ?? [] };
  }

  /** Closes the session (and the DuckDB file) and stops the helper thread. */
  close(): void {
    const helper = this.#helper;
    if (!helper) return;
    try {
      this.#ask({ type: 'close' }, CLOSE_TIMEOUT_MS);
    } catch {
      // the helper is stopped below either way
    }
    this.#stop(helper);
  }

  #start(): Helper {
    const { port1, port2 } = new MessageChannel();
    const state = new Int32Array(new SharedArrayBuffer(4));
    const data: SyncQueryData = { port: port2, state, connection: this.connection };
    const worker = new Worker(workerEntryUrl(import.meta.url, './sync-query-worker.js'), { workerData: data, transferList: [port2] });
    // A helper that fails to start stores DEAD (or never answers): #ask reports it.
    worker.on('error', () => {});
    worker.unref();
    return { worker, port: port1, state, seq: 0 };
  }

  #stop(helper: Helper): void {
    if (this.#helper === helper) this.#helper = undefined;
    helper.port.close();
    void helper.worker.terminate();
  }

  #ask(req: { type: 'query'; sql: string } | { type: 'close' }, timeoutMs: number): SyncQueryReply {
    const helper = (this.#helper ??= this.#start());
    const seq = ++helper.seq;
    helper.port.postMessage({ ...req, seq } satisfies SyncQueryRequest);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = Atomics.load(helper.state, 0);
      if (now === seq) break;
      const left = deadline - Date.now();
      if (now === DEAD || left <= 0) {
        this.#stop(helper);
        throw new EngineError('compile', now === DEAD ? 'query failed: the query thread stopped' : `query failed: no answer within ${timeoutMs / 1000} s`);
      }
      Atomics.wait(helper.state, 0, now, left);
    }
    const message = receiveMessageOnPort(helper.port);
    if (!message) throw new EngineError('internal', 'compile-time query: answered without a message');
    return message.message as SyncQueryReply;
  }
}
