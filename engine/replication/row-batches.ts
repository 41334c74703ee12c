/**
 * `target_options.batch_limit` on a PostgreSQL target: the rows of one
 * text or CSV COPY stream cut into batches of at most `limit` rows, each
 * sent as its own `COPY … FROM STDIN` (pg-target.ts). The stream is read
 * once and never held whole: a batch is a generator over the source's
 * chunks, the chunk holding a batch boundary is split there and its rest
 * starts the next batch.
 *
 * A row ends at a newline byte. In PostgreSQL's text format a newline inside
 * a value is written as `\n`, so every newline byte ends a row; in CSV a
 * newline inside a quoted field does not, so `csv` tracks the quotes (a
 * doubled `""` toggles twice and leaves the state unchanged).
 */
/** `target_options.batch_limit` when not set: the rows one load statement takes at most. */
export const DEFAULT_BATCH_LIMIT = 50_000;

const NL = 0x0a;
const QUOTE = 0x22;

export class RowBatches {
  readonly #it: AsyncIterator<Buffer | string>;
  readonly #limit: number;
  readonly #csv: boolean;
  #carry: Buffer | undefined;
  #ended = false;
  #inQuote = false;
  /** Batches started so far. */
  count = 0;

  constructor(source: AsyncIterable<Buffer | string>, limit: number, csv: boolean) {
    this.#it = source[Symbol.asyncIterator]();
    this.#limit = limit;
    this.#csv = csv;
  }

  /** Whether any byte is left for another batch (reads ahead one chunk when needed). */
  async more(): Promise<boolean> {
    while (this.#carry === undefined || this.#carry.length === 0) {
      if (this.#ended) return false;
      const r = await this.#it.next();
      if (r.done) this.#ended = true;
      else this.#carry = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    }
    return true;
  }

  /** Ends the source early (a failed COPY): a COPY stream is destroyed. */
  async close(): Promise<void> {
    this.#ended = true;
    this.#carry = undefined;
    await this.#it.return?.().catch(() => {});
  }

  /** The next batch's bytes: up to and including the newline of its `limit`-th row, or the end of the stream. */
  async *batch(): AsyncGenerator<Buffer> {
    this.count++;
    let rows = 0;
    while (await this.more()) {
      const chunk = this.#carry!;
      this.#carry = undefined;
      const cut = this.#rowEnds(chunk, this.#limit - rows);
      if (cut.at < 0) {
        rows += cut.rows;
        yield chunk;
        continue;
      }
      if (cut.at + 1 < chunk.length) this.#carry = chunk.subarray(cut.at + 1);
      yield chunk.subarray(0, cut.at + 1);
      return;
    }
  }

  /** Counts row ends in `chunk` until the `wanted`-th: its offset, or -1 and how many there were. */
  #rowEnds(chunk: Buffer, wanted: number): { at: number; rows: number } {
    let rows = 0;
    let i = 0;
    // The next quote at or after i, found once and reused until passed (a search per row would be quadratic).
    let q = this.#csv ? chunk.indexOf(QUOTE) : -1;
    while (i < chunk.length) {
      if (q >= 0 && q < i) q = chunk.indexOf(QUOTE, i);
      if (this.#inQuote) {
        if (q < 0) return { at: -1, rows };
        this.#inQuote = false;
        i = q + 1;
        continue;
      }
      const nl = chunk.indexOf(NL, i);
      if (q >= 0 && (nl < 0 || q < nl)) {
        this.#inQuote = true;
        i = q + 1;
        continue;
      }
      if (nl < 0) return { at: -1, rows };
      if (++rows === wanted) return { at: nl, rows };
      i = nl + 1;
    }
    return { at: -1, rows };
  }
}
