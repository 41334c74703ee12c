/**
 * The one entry point that turns a seed file into a typed table, independent
 * of the target: the PostgreSQL and DuckDB loaders only create the table from
 * `columns` (via POSTGRES_TYPES / DUCKDB_TYPES) and bulk-insert `rows`.
 * Parquet seeds are not read here: DuckDB reads them directly.
 *
 * Errors: an unreadable file is `could not read seed '<n>'` with the I/O error
 * as cause (errorChain renders `could not read seed '<n>': <cause>`); bad
 * content is `seed '<n>': <what is wrong>`.
 */
import { readFile } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import { parseCsv } from './csv.js';
import { typeTextTable, type SeedTable } from './infer.js';
import { parseJsonSeed } from './json.js';
import { seedError } from './seed-error.js';

export type { LogicalType, SeedColumn, SeedTable } from './infer.js';

export type TextSeedFormat = 'csv' | 'json';

/** Parses already-decoded seed text; exposed for callers holding the text (compile, tests). */
export function parseSeedText(name: string, text: string, format: TextSeedFormat, csv: CsvOptions = {}): SeedTable {
  if (format === 'json') return parseJsonSeed(name, text);
  const { header, rows } = parseCsv(name, text, csv.delimiter);
  // quote_columns: false in dbt: names are unquoted identifiers, which the database folds to lower case.
  const typed = typeTextTable(csv.foldColumns ? header.map((h) => h.toLowerCase()) : header, rows);
  const declared = csv.textColumns;
  if (!declared || declared.length === 0) return typed;
  // Columns with a declared type load as the text written, so `01234` keeps its zero until the cast.
  const want = new Set(declared.map((c) => c.toLowerCase()));
  const idx = typed.columns.flatMap((c, i) => (want.has(c.name.toLowerCase()) ? [i] : []));
  return {
    columns: typed.columns.map((c, i) => (idx.includes(i) ? { ...c, type: 'text' as const } : c)),
    rows: typed.rows.map((r, j) => r.map((v, i) => (idx.includes(i) ? rows[j]![i]! : v))),
  };
}

export interface CsvOptions {
  readonly delimiter?: string;
  /** Columns loaded as text as written (their declared type is applied afterwards). */
  readonly textColumns?: readonly string[];
  /** Lower-case the header names (unquoted identifiers). */
  readonly foldColumns?: boolean;
}

/** Reads and types a CSV or JSON seed file (UTF-8, optional BOM). */
export async function readSeedTable(name: string, file: string, format: TextSeedFormat, csv: CsvOptions = {}): Promise<SeedTable> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new EngineError('node', `could not read seed '${name}'`, err);
  }
  let text: string;
  try {
    // fatal: invalid UTF-8 is an error rather than silently becoming U+FFFD in the table.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw seedError(name, 'file is not valid UTF-8');
  }
  return parseSeedText(name, text, format, csv);
}
