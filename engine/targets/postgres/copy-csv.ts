/**
 * Rows → `COPY … FROM STDIN WITH (FORMAT csv)` text. NULL is an empty
 * unquoted field and every value is quoted, so the empty string (`""`) and
 * NULL stay distinct and text such as `007` or `null` arrives byte for byte.
 */

function csvField(value: string | null): string {
  return value === null ? '' : `"${value.replace(/"/g, '""')}"`;
}

export function csvLine(row: readonly (string | null)[]): string {
  return `${row.map(csvField).join(',')}\n`;
}

/** Chunk size handed to the COPY stream: large enough to amortize writes, small enough to stream. */
export const COPY_CHUNK_CHARS = 65536;

export function* copyCsvChunks(rows: Iterable<readonly (string | null)[]>): Generator<string> {
  let buf = '';
  for (const row of rows) {
    buf += csvLine(row);
    if (buf.length >= COPY_CHUNK_CHARS) {
      yield buf;
      buf = '';
    }
  }
  if (buf !== '') yield buf;
}

/** What a seed source becomes before loading: PostgreSQL column types and COPY CSV text. */
export interface CopyPlan {
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly chunks: Iterable<string> | AsyncIterable<string>;
  /** Releases whatever produced the chunks; called once loading ends. */
  readonly close: () => void;
}
