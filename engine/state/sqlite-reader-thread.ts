/**
 * A reader thread of a SQLite state file (sqlite-readers.ts): its own
 * read-only (`query_only`) connection, opened on its first task (a file
 * that cannot be opened fails each request with SQLite's error), and one
 * task per batch of statements, each answered with the UTF-8 bytes of the
 * JSON array of the JSON texts it selects, or SQLite's error. Statements are
 * prepared once per thread (by their text) and kept, like the connection,
 * until the thread ends (sqlite-database.ts says why).
 */
import type Database from 'better-sqlite3';
import { workerData } from 'piscina';
import { openDatabase, pragma } from './sqlite-database.js';

export interface ReaderRequest {
  readonly sql: string;
  readonly params: readonly unknown[];
  /** Takes the JSON array of the integers `sql` returned in place of texts; returns `[integer, text]` rows. */
  readonly fill: string;
}

export type ReaderReply = { readonly bytes: Uint8Array } | { readonly error: { readonly message: string; readonly code?: string } };

const { file } = workerData as { file: string };
let db: Database.Database | undefined;

function connection(): Database.Database {
  if (db !== undefined) return db;
  const opened = openDatabase(file, { fileMustExist: true });
  pragma(opened, 'busy_timeout = 5000');
  pragma(opened, 'query_only = ON');
  return (db = opened);
}

const statements = new Map<string, Database.Statement>();
const encoder = new TextEncoder();

function prepare(sql: string, raw: boolean): Database.Statement {
  const key = raw ? `raw:${sql}` : sql;
  let s = statements.get(key);
  if (s === undefined) statements.set(key, (s = raw ? connection().prepare(sql).raw(true) : connection().prepare(sql).pluck()));
  return s;
}

function run(r: ReaderRequest): ReaderReply {
  try {
    const rows = prepare(r.sql, false).all(...r.params) as (string | number)[];
    let missing: number[] | undefined;
    for (const v of rows) if (typeof v === 'number') (missing ??= []).push(v);
    if (missing !== undefined) {
      const texts = new Map(prepare(r.fill, true).all(JSON.stringify(missing)) as [number, string][]);
      for (let i = 0; i < rows.length; i++) if (typeof rows[i] === 'number') rows[i] = texts.get(rows[i] as number)!;
    }
    return { bytes: encoder.encode(`[${rows.join(',')}]`) };
  } catch (e) {
    const err = e as { message?: unknown; code?: unknown };
    return { error: { message: String(err?.message), ...(typeof err?.code === 'string' ? { code: err.code } : {}) } };
  }
}

export default function readBatch(batch: readonly ReaderRequest[]): ReaderReply[] {
  return batch.map(run);
}
