/**
 * How rows travel from a source to a target, by the pair of sides:
 *
 * - `pg-text`: PostgreSQL `COPY (…) TO STDOUT` in text format, which a
 *   PostgreSQL target takes as is (`COPY … FROM STDIN`).
 * - `pg-binary`: the same in binary format, which a DuckDB target decodes
 *   into column blocks and inserts in batches (duckdb-copy-feed.ts).
 * - `csv`: PostgreSQL CSV written by DuckDB (DuckDB and file sources), for `COPY … FROM STDIN (FORMAT csv)`.
 * - `duckdb-sql`: a SELECT the target's own DuckDB connection runs (DuckDB
 *   sources on the same file, files read by the target DuckDB).
 *
 * Every feed streams: the COPY streams apply back-pressure, DuckDB results
 * are fetched a chunk at a time, so memory stays flat whatever the size.
 */
import type { Readable } from 'node:stream';
import type { SourceColumn } from './column-types.js';

export type Feed =
  | { readonly kind: 'pg-text'; readonly open: () => Readable }
  | { readonly kind: 'pg-binary'; readonly columns: readonly SourceColumn[]; readonly open: () => Readable }
  | { readonly kind: 'csv'; readonly open: () => AsyncIterable<Buffer> }
  | { readonly kind: 'duckdb-sql'; readonly sql: string };

/** Rows and bytes moved by one load. */
export interface LoadCount {
  readonly rows: number;
  readonly bytes: number;
}
