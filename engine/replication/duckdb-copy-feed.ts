/**
 * PostgreSQL binary COPY → a DuckDB table through a table function:
 * `INSERT INTO t (…) SELECT * FROM _service_pg_copy('<feed>')`, whose rows
 * are column blocks decoded in JavaScript (pg-copy-reader.ts) and copied
 * into DuckDB's data chunks a column at a time.
 *
 * DuckDB calls a table function synchronously and a scan ends at its first
 * empty chunk, so rows go in batches, one INSERT each: the reader fills the
 * next batch while DuckDB inserts one; when DuckDB is idle it gets what
 * there is, when it is busy the batch grows (fewer INSERTs), and when a
 * full batch waits the reader pauses the COPY stream (back-pressure), so
 * memory stays at three batches whatever the table size. The INSERT runs on
 * DuckDB's thread; each 2,048-row chunk of its scan hops to this thread.
 *
 * Why: `npm run bench -- --only=replication` (1M rows of ten columns),
 * alternating the two builds on a shared 2-core machine (load 8–12): CSV
 * batch files read by DuckDB's `read_csv` cost this process 2.67–2.77 s of
 * CPU, this path 1.98–2.15 s; PostgreSQL's backend spends ≈1.1 s writing
 * that CSV and ≈0.75 s writing binary. The appender (`append_data_chunk`)
 * would run DuckDB's storage work on this thread, serialised with the
 * decoding; handing DuckDB one constant BLOB per chunk to slice in SQL
 * instead of one call per string was 10× slower.
 */
import { DuckDBTableFunction, VARCHAR, type DuckDBConnection, type DuckDBDataChunk } from '@duckdb/node-api';
import type duckdbBindings from '@duckdb/node-bindings';
import { createRequire } from 'node:module';
import { EngineError } from '../errors.js';
import type { DuckSession } from './duck-session.js';
import type { BinaryColumn } from './pg-binary-columns.js';
import { CopyBinaryReader, type Block } from './pg-copy-reader.js';

/** The table function every feed is read through (one name; the feed is its argument). */
const FEED_FUNCTION = '_service_pg_copy';
/**
 * Batches: one is handed to DuckDB as soon as DuckDB is idle and it holds
 * `MIN_ROWS`; while DuckDB is busy, the next grows up to `MAX_ROWS` rows or
 * `MAX_BYTES` of input, then the stream pauses. Fewer INSERTs cost less:
 * inserting 1M bench rows into a DuckDB file took 0.83–1.16 s of CPU as one
 * statement, 1.23–1.43 s as 16 of 65,536 rows in one transaction.
 */
const MIN_ROWS = 16384;
const MAX_ROWS = 262144;
const MAX_BYTES = 32 << 20;

type Bindings = typeof duckdbBindings;
let bindings: Bindings | undefined;

/**
 * The low-level bindings @duckdb/node-api is built on (its data chunks hand
 * them out as `.chunk`), resolved from node-api itself so both share one
 * addon: copying a column in one call needs them.
 */
function lowLevel(): Bindings {
  if (bindings === undefined) {
    const fromHere = createRequire(import.meta.url);
    bindings = createRequire(fromHere.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as Bindings;
  }
  return bindings;
}

interface Feed {
  readonly columns: readonly BinaryColumn[];
  /** Takes back a block once its rows are in DuckDB's chunk. */
  readonly recycle: (block: Block) => void;
  /** The batch the running INSERT reads, and how far it got. */
  batch: Block[];
  next: number;
}

const feeds = new Map<string, Feed>();
let feedSeq = 0;
const registered = new WeakSet<DuckDBConnection>();
let tableFunction: DuckDBTableFunction | undefined;

function writeBlock(b: Bindings, block: Block, columns: readonly BinaryColumn[], chunk: DuckDBDataChunk['chunk']): void {
  const rows = block.rows;
  b.data_chunk_set_size(chunk, rows);
  for (let k = 0; k < columns.length; k++) {
    const vector = b.data_chunk_get_vector(chunk, k);
    const data = block.data[k];
    if (data !== undefined) b.copy_data_to_vector(vector, 0, data, 0, rows * columns[k]!.width);
    else {
      const { source, offset, length } = block.values[k]!;
      for (let r = 0; r < rows; r++) {
        const size = length[r]!;
        if (size >= 0) b.vector_assign_string_element_len(vector, r, new Uint8Array(source[r]!, offset[r], size));
      }
    }
    if (block.hasNull[k] === 1) {
      b.vector_ensure_validity_writable(vector);
      b.copy_data_to_vector_validity(vector, 0, block.validity[k]!.buffer as ArrayBuffer, 0, Math.ceil(rows / 64) * 8);
    }
  }
}

/** Registers the feed function on `conn` (once per connection; a later registration replaces the entry). */
function ensureFeedFunction(conn: DuckDBConnection): void {
  if (registered.has(conn)) return;
  const b = lowLevel();
  // One function object per thread, kept alive with its callbacks for as long as DuckDB may call them.
  tableFunction ??= DuckDBTableFunction.create({
    name: FEED_FUNCTION,
    parameterTypes: [VARCHAR],
    bindFunction(info) {
      const id = String(info.getParameter(0));
      const feed = feeds.get(id);
      if (feed === undefined) {
        info.setError(`${FEED_FUNCTION}: no replication feed "${id}" on this thread`);
        return;
      }
      feed.columns.forEach((c, i) => info.addResultColumn(`c${i}`, c.type));
      info.setBindData(feed);
    },
    initFunction() {},
    mainFunction(info, output) {
      const feed = info.bindData as Feed;
      try {
        const block = feed.batch[feed.next++];
        if (block === undefined) b.data_chunk_set_size(output.chunk, 0);
        else {
          writeBlock(b, block, feed.columns, output.chunk);
          feed.recycle(block);
        }
      } catch (err) {
        info.setError(err instanceof Error ? err.message : String(err));
      }
    },
  });
  conn.registerTableFunction(tableFunction);
  registered.add(conn);
}

export interface CopyFeedLoad {
  readonly columns: readonly BinaryColumn[];
  /** Column names for error messages (feed order). */
  readonly names: readonly string[];
  /** The INSERT statement reading `from` (a table function call). */
  readonly insert: (from: string) => string;
  /** After each chunk: rows decoded and bytes read so far. */
  readonly onProgress?: (rows: number, bytes: number) => void;
  /** `target_options.batch_limit`: no INSERT takes more rows (batches are whole blocks of at most this many). */
  readonly batchLimit?: number;
}

/**
 * Loads a PostgreSQL binary COPY stream through `s` in batches; resolves to
 * the rows inserted, the bytes read and the INSERTs run. On failure, no INSERT is left
 * running on the connection when it rejects.
 */
export async function loadCopyFeed(s: DuckSession, source: AsyncIterable<Buffer>, o: CopyFeedLoad): Promise<{ rows: number; bytes: number; statements: number }> {
  ensureFeedFunction(s.conn);
  const id = `f${++feedSeq}`;
  const feed: Feed = { columns: o.columns, recycle: (block) => reader.recycle(block), batch: [], next: 0 };
  feeds.set(id, feed);
  const sql = o.insert(`${FEED_FUNCTION}('${id}')`);
  const limit = o.batchLimit ?? Number.POSITIVE_INFINITY;
  const minRows = Math.min(MIN_ROWS, limit);
  const maxRows = Math.min(MAX_ROWS, limit);
  let batch: Block[] = [];
  let batchRows = 0;
  let batchBytes = 0;
  /** Sealed batches waiting for the running INSERT, oldest first. */
  let queue: Block[][] = [];
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  let rows = 0;
  let total = 0;
  let statements = 0;

  const start = (rowsOf: Block[]) => {
    statements++;
    feed.batch = rowsOf;
    feed.next = 0;
    running = s.run(sql).then(
      (n) => void (rows += n),
      (error: unknown) => void (failure ??= { error }),
    ).finally(() => {
      running = undefined;
      if (failure !== undefined) return;
      if (queue.length > 0) start(queue.shift()!);
      else if (batchRows >= minRows) seal();
    });
  };
  /** Hands the batch being filled to DuckDB: now if it is idle, else to the queue. */
  const seal = () => {
    if (batch.length === 0 || failure !== undefined) return;
    const sealed = batch;
    batch = [];
    batchRows = batchBytes = 0;
    if (running === undefined) start(sealed);
    else queue.push(sealed);
  };
  const full = () => batchRows >= maxRows || batchBytes >= MAX_BYTES;
  const reader = new CopyBinaryReader(o.columns, o.names, (block) => {
    // A block that would take the batch past batch_limit starts the next one.
    if (batchRows + block.rows > limit) seal();
    batch.push(block);
    batchRows += block.rows;
    batchBytes += block.bytes;
    // DuckDB idle: give it what there is. Busy: grow the batch (fewer, larger INSERTs) up to the cap.
    if ((running === undefined && batchRows >= minRows) || (queue.length === 0 && full())) seal();
  }, Math.min(limit, MIN_ROWS));
  const drain = async () => {
    while (running !== undefined) await running;
  };

  try {
    for await (const chunk of source) {
      if (failure !== undefined) throw failure.error;
      total += chunk.length;
      reader.push(chunk);
      o.onProgress?.(reader.rows, total);
      // Back-pressure: a batch waits and the next one is full, or (small batch_limit) several wait.
      while (running !== undefined && (queue.length > 1 || (queue.length > 0 && full()))) await running;
    }
    reader.end();
    await drain();
    seal();
    await drain();
    if (failure !== undefined) throw failure.error;
    if (rows !== reader.rows) throw new EngineError('internal', `the COPY stream had ${reader.rows} rows but ${rows} were inserted`);
    return { rows, bytes: total, statements };
  } catch (err) {
    failure ??= { error: err };
    queue = [];
    await drain();
    throw err;
  } finally {
    feeds.delete(id);
  }
}
