/**
 * DuckDB reads CSV lines of at most 16 MiB (a larger limit makes its reader
 * allocate blocks the load's memory budget cannot hold). A PostgreSQL row
 * longer than that fails its batch with an error quoting megabytes of the
 * line; this turns it into a message that says which row and which column,
 * read back from the batch file before it is removed.
 */
import { readFile } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import { rowEnd } from './csv-batches.js';

export const DUCKDB_MAX_LINE_BYTES = 16 * 1024 * 1024;

const COMMA = 0x2c;
const QUOTE = 0x22;

/** Byte length of each field of one CSV row (quotes doubled inside quoted fields). */
export function fieldLengths(row: Buffer): number[] {
  const lengths: number[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c === QUOTE) quoted = !quoted;
    else if (c === COMMA && !quoted) {
      lengths.push(i - start);
      start = i + 1;
    }
  }
  lengths.push(row.length - start);
  return lengths;
}

/** Line `line` (1-based) of a CSV file whose rows may contain quoted newlines. */
async function rowOf(file: string, line: number): Promise<Buffer | undefined> {
  const data = await readFile(file);
  let offset = 0;
  for (let n = 1; offset < data.length; n++) {
    const end = rowEnd(data.subarray(offset), false);
    const stop = end < 0 ? data.length : offset + end;
    if (n === line) return data.subarray(offset, stop);
    offset = stop + 1;
  }
  return undefined;
}

/**
 * When `err` is DuckDB's "Maximum line size … exceeded" for `file`, an
 * EngineError naming the row (counted over the whole stream, `rowsBefore`
 * loaded by earlier batches) and its largest column; otherwise undefined.
 */
export async function oversizedRowError(err: unknown, file: string, rowsBefore: number, columns: readonly string[]): Promise<EngineError | undefined> {
  const message = err instanceof Error ? err.message : String(err);
  if (!/Maximum line size of \d+ bytes exceeded/.test(message)) return undefined;
  const line = Number(/CSV Error on Line: (\d+)/.exec(message)?.[1] ?? NaN);
  const row = Number.isFinite(line) ? await rowOf(file, line).catch(() => undefined) : undefined;
  const at = Number.isFinite(line) ? `row ${rowsBefore + line}` : 'a row';
  if (row === undefined) return new EngineError('node', `${at} is over DuckDB's 16 MiB line limit`);
  const lengths = fieldLengths(row);
  const widest = lengths.indexOf(Math.max(...lengths));
  const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
  return new EngineError('node', `${at} is ${mib(row.length)} MiB, over DuckDB's 16 MiB line limit: column "${columns[widest] ?? `#${widest + 1}`}" holds ${mib(lengths[widest]!)} MiB`);
}
