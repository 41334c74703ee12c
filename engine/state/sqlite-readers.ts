/**
 * Reader threads of a SQLite state file: each holds its own read-only
 * (`query_only`) better-sqlite3 connection to the file and runs the
 * statements it is sent (sqlite-reader-thread.ts), returning the JSON array
 * of the JSON texts each produces as UTF-8 bytes. In WAL mode readers never
 * block the writer nor wait for it, and every statement starts a read
 * transaction that sees everything committed before it began: a read sent
 * after a commit of the store's own connection sees that commit.
 *
 * Why: better-sqlite3 is synchronous, so a page query on the daemon's
 * connection holds the event loop for as long as SQLite works (≈0.1–0.9 ms
 * of CPU a page, with or without stored JSON) and every other request waits
 * behind it. On a reader thread the main thread only routes: it sends the
 * statement and receives the bytes it writes to the socket.
 *
 * The threads are a Piscina pool (engine/threads/module-pool.ts), started on
 * the first request. The requests of one turn of the event loop cross
 * together at its end, split in one task per thread (each task costs the
 * main thread a wake-up of a thread). A failed statement rejects with an
 * Error carrying SQLite's message and code; a thread that dies fails what it
 * had in flight and the pool starts another. Closing waits for the requests
 * sent, then ends the threads (ending a thread closes its connection:
 * better-sqlite3 closes its databases when their thread's environment is
 * torn down).
 */
import type { Piscina } from 'piscina';
import { modulePool } from '../threads/module-pool.js';
import type { ReaderReply, ReaderRequest } from './sqlite-reader-thread.js';

interface Queued {
  readonly request: ReaderRequest;
  readonly resolve: (bytes: Buffer) => void;
  readonly reject: (err: Error) => void;
}

export class SqliteReaders {
  readonly #file: string;
  readonly #threads: number;
  #pool: Piscina<readonly ReaderRequest[], ReaderReply[]> | undefined;
  /** Requests of this turn of the event loop not sent yet. */
  #queued: Queued[] = [];
  #closed = false;

  constructor(file: string, threads: number) {
    this.#file = file;
    this.#threads = Math.max(1, threads);
  }

  /**
   * The rows of `sql` as the UTF-8 bytes of a JSON array: each row's first
   * column is a JSON text, or an integer naming a row whose text `fill`
   * gives (`fill` takes the JSON array of those integers as its one
   * parameter and returns `[integer, text]` rows).
   */
  jsonArray(sql: string, params: readonly unknown[], fill: string): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('the state store is closed'));
    return new Promise<Buffer>((resolve, reject) => {
      if (this.#queued.length === 0) setImmediate(() => this.#send());
      this.#queued.push({ request: { sql, params, fill }, resolve, reject });
    });
  }

  /** Sends this turn's requests: one task per thread at most. */
  #send(): void {
    const queued = this.#queued;
    if (queued.length === 0) return; // already sent by close
    this.#queued = [];
    this.#pool ??= modulePool<readonly ReaderRequest[], ReaderReply[]>(import.meta.url, './sqlite-reader-thread.js', { maxThreads: this.#threads, workerData: { file: this.#file } });
    const tasks = Math.min(this.#threads, queued.length);
    const per = Math.ceil(queued.length / tasks);
    for (let t = 0; t < queued.length; t += per) {
      const part = queued.slice(t, t + per);
      this.#pool.run(part.map((q) => q.request)).then(
        (replies) => part.forEach((q, k) => settle(q, replies[k])),
        (err: unknown) => {
          const failure = new Error(`SQLite reader thread of ${this.#file}: ${err instanceof Error ? err.message : String(err)}`);
          for (const q of part) q.reject(failure);
        },
      );
    }
  }

  /** Waits for the requests sent (this turn's included), then ends every thread; later requests are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#send();
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.close();
  }
}

function settle(q: Queued, reply: ReaderReply | undefined): void {
  if (reply !== undefined && 'bytes' in reply) q.resolve(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
  else q.reject(Object.assign(new Error(reply?.error.message ?? 'no answer from the SQLite reader thread'), reply?.error.code !== undefined ? { code: reply.error.code } : {}));
}
