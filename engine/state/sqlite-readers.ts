/**
 * Reader threads of a SQLite state file: each holds its own read-only
 * (`query_only`) better-sqlite3 connection to the file and runs the
 * statements it is sent, one at a time, returning the JSON array of the
 * JSON texts each produces as UTF-8 bytes (transferred, not copied). A
 * statement's SQL crosses once per thread; later requests name it by
 * number. In WAL mode readers never block the writer nor wait for it, and
 * every statement starts a read transaction that sees everything committed
 * before it began: a read sent after a commit of the store's own connection
 * sees that commit.
 *
 * Why: better-sqlite3 is synchronous, so a page query on the daemon's
 * connection holds the event loop for as long as SQLite works (≈0.1–0.9 ms
 * of CPU a page, with or without stored JSON) and every other request waits
 * behind it. On a reader thread the main thread only routes: it sends the
 * statement and receives the bytes it writes to the socket. With a
 * different filter on every request (bench suite 4, 1 reader on the 2-core
 * dev machine): main thread ≈150–230 µs of CPU a request, reader ≈170 µs.
 *
 * Requests go to the thread with the fewest in flight; those a thread gets
 * during one turn of the event loop cross in one message at its end, and
 * their answers come back in one. A failed statement
 * rejects with an Error carrying SQLite's message and code; a thread that
 * exits rejects what it had in flight and is replaced on the next request.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Plain CommonJS run with `eval`, so the same code serves the compiled build and tsx test runs.
// Statements and the connection stay referenced until the thread ends (see sqlite-database.ts:
// better-sqlite3 12's objects must not be garbage collected on Node 24).
const SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const kept = [];
const pragma = (text) => { const s = db.prepare('PRAGMA ' + text); kept.push(s); return s.reader ? s.get() : s.run(); };
pragma('busy_timeout = 5000');
pragma('query_only = ON');
const statements = [];
const prepare = (n, sql, raw) => {
  let s = statements[n];
  if (s === undefined) {
    s = statements[n] = raw ? db.prepare(sql).raw(true) : db.prepare(sql).pluck();
    kept.push(s);
  }
  return s;
};
const encoder = new TextEncoder();
function run(m) {
  try {
    if (m.fillSql !== undefined) prepare(m.fill, m.fillSql, true); // prepared now: later requests do not carry it
    const rows = prepare(m.statement, m.sql, false).all(...m.params);
    let missing;
    for (const v of rows) if (typeof v === 'number') (missing ??= []).push(v);
    if (missing !== undefined) {
      const texts = new Map(prepare(m.fill, m.fillSql, true).all(JSON.stringify(missing)));
      for (let i = 0; i < rows.length; i++) if (typeof rows[i] === 'number') rows[i] = texts.get(rows[i]);
    }
    return { id: m.id, bytes: encoder.encode('[' + rows.join(',') + ']') };
  } catch (e) {
    return { id: m.id, error: { message: String(e && e.message), code: e && e.code } };
  }
}
parentPort.on('message', (m) => {
  if (m.close) { db.close(); parentPort.close(); return; }
  const replies = m.batch.map(run);
  parentPort.postMessage(replies, replies.flatMap((r) => (r.bytes ? [r.bytes.buffer] : [])));
});
`;

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

interface Pending {
  readonly resolve: (bytes: Buffer) => void;
  readonly reject: (err: Error) => void;
  /** The statement numbers, when this request carried their SQL (a failure may mean they were not prepared). */
  readonly prepares?: readonly number[];
}

interface Reader {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** Requests of this turn of the event loop not sent yet: they cross in one message at its end. */
  queued: Record<string, unknown>[];
  /** Statement numbers this thread has prepared: their SQL is not sent again. */
  readonly prepared: Set<number>;
}

type Reply = { readonly id: number; readonly bytes: Uint8Array } | { readonly id: number; readonly error: { readonly message: string; readonly code?: string } };

export class SqliteReaders {
  readonly #file: string;
  readonly #readers: (Reader | null)[];
  #nextId = 0;
  #closed = false;
  /** A number per distinct SQL text (a handful of filter shapes), shared by the threads. */
  readonly #statements = new Map<string, number>();

  constructor(file: string, threads: number) {
    this.#file = file;
    this.#readers = Array.from({ length: Math.max(1, threads) }, () => null);
  }

  /**
   * The rows of `sql` as the UTF-8 bytes of a JSON array: each row's first
   * column is a JSON text, or an integer naming a row whose text `fill`
   * gives (`fill` takes the JSON array of those integers as its one
   * parameter and returns `[integer, text]` rows).
   */
  jsonArray(sql: string, params: readonly unknown[], fill: string): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('the state store is closed'));
    const r = this.#pick();
    const id = this.#nextId++;
    const statement = this.#number(sql);
    const fillStatement = this.#number(fill);
    // Both statements' SQL cross with the first request of each to a thread (a failure forgets them).
    const first = !r.prepared.has(statement) || !r.prepared.has(fillStatement);
    r.prepared.add(statement).add(fillStatement);
    return new Promise<Buffer>((resolve, reject) => {
      r.pending.set(id, { resolve, reject, ...(first ? { prepares: [statement, fillStatement] } : {}) });
      if (r.pending.size === 1) r.worker.ref();
      if (r.queued.length === 0) setImmediate(() => this.#send(r));
      r.queued.push({ id, statement, params, fill: fillStatement, ...(first ? { sql, fillSql: fill } : {}) });
    });
  }

  /** Sends what `r` was asked during this turn (one message per thread and turn: each costs the main thread a wake-up of that thread). */
  #send(r: Reader): void {
    const batch = r.queued;
    if (batch.length === 0) return; // already sent by close
    r.queued = [];
    r.worker.postMessage({ batch });
  }

  #number(sql: string): number {
    let n = this.#statements.get(sql);
    if (n === undefined) this.#statements.set(sql, (n = this.#statements.size));
    return n;
  }

  /** Ends every thread (each closes its connection first); requests in flight are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#readers.map(async (r, i) => {
        if (r === null) return;
        this.#readers[i] = null;
        const exited = new Promise<void>((resolve) => r.worker.once('exit', () => resolve()));
        r.worker.ref(); // the exit is awaited: keep the event loop alive until it comes
        this.#send(r); // requests of this turn are still answered
        r.worker.postMessage({ close: true });
        await exited;
      }),
    );
  }

  #pick(): Reader {
    let best = 0;
    for (let i = 0; i < this.#readers.length; i++) {
      const r = this.#readers[i];
      if (r === null) {
        best = i;
        break;
      }
      if (r.pending.size < this.#readers[best]!.pending.size) best = i;
    }
    return this.#readers[best] ?? (this.#readers[best] = this.#start(best));
  }

  #start(slot: number): Reader {
    // execArgv: none of the parent's flags (e.g. a TypeScript loader) are needed for this code.
    const worker = new Worker(SOURCE, { eval: true, execArgv: [], name: `sqlite-reader-${slot}`, workerData: { driver: DRIVER, file: this.#file } });
    const reader: Reader = { worker, pending: new Map(), queued: [], prepared: new Set() };
    worker.unref(); // referenced only while a request is in flight
    const fail = (err: Error) => {
      if (this.#readers[slot] === reader) this.#readers[slot] = null;
      for (const p of reader.pending.values()) p.reject(err);
      reader.pending.clear();
    };
    worker.on('message', (replies: Reply[]) => {
      for (const m of replies) {
        const p = reader.pending.get(m.id);
        if (p === undefined) continue;
        reader.pending.delete(m.id);
        if ('bytes' in m) {
          p.resolve(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
          continue;
        }
        for (const n of p.prepares ?? []) reader.prepared.delete(n);
        p.reject(Object.assign(new Error(m.error.message), m.error.code !== undefined ? { code: m.error.code } : {}));
      }
      if (reader.pending.size === 0) worker.unref();
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`SQLite reader thread ${slot} of ${this.#file} exited (code ${code})`)));
    return reader;
  }
}
