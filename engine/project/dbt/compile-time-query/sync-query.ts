/**
 * Queries during template rendering (`run_query`, `adapter.get_relation`,
 * `{% call statement %}`). Templates render synchronously, so this thread
 * posts each query to a helper thread (sync-query-worker.ts) and blocks
 * until the answer is in (a BlockingThread: engine/threads/blocking-thread.ts). The helper starts on the
 * first query and keeps its session (or, for DuckDB, its query process) for
 * the rest of the compile, so a project with many such queries pays one
 * connection, not one process start per query. A project that never queries
 * at compile time starts no thread and opens no connection; `close()` at the
 * end of the compile closes the session and, on DuckDB, the file before the
 * run opens it.
 */
import type { Connection } from '../../../connections/index.js';
import { EngineError } from '../../../errors.js';
import { BlockingThread } from '../../../threads/blocking-thread.js';
import type { QueryTable } from './query-session.js';
import type { SyncQueryReply, SyncQueryRequest } from './sync-query-protocol.js';

export type { QueryTable } from './query-session.js';

const QUERY_TIMEOUT_MS = 300_000;
/** Closing waits this long for the session (and the DuckDB file) to close. */
const CLOSE_TIMEOUT_MS = 30_000;

export class SyncQuery {
  #helper: BlockingThread | undefined;

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

  #stop(helper: BlockingThread): void {
    if (this.#helper === helper) this.#helper = undefined;
    helper.stop();
  }

  #ask(req: SyncQueryRequest, timeoutMs: number): SyncQueryReply {
    const helper = (this.#helper ??= new BlockingThread(import.meta.url, './sync-query-worker.js', { name: 'compile-time-query', data: this.connection }));
    helper.post(req);
    const r = helper.receive<SyncQueryReply>(timeoutMs);
    if (r.kind === 'answer') return r.answer;
    this.#stop(helper);
    throw new EngineError('compile', r.kind === 'ended' ? 'query failed: the query thread stopped' : `query failed: no answer within ${timeoutMs / 1000} s`);
  }
}
