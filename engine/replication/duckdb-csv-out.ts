/**
 * DuckDB rows as PostgreSQL CSV bytes, written by DuckDB's own CSV writer
 * (`COPY (…) TO <fifo> (FORMAT csv)`: parallel, in C++) into a named pipe
 * in a temp directory of ours that this thread reads while DuckDB writes —
 * so PostgreSQL loads the first rows while DuckDB still formats the last.
 *
 * Why: 1,000,000 rows of the bench's ten columns built as one CSV line per
 * row in SQL and joined in JavaScript (`DuckSession.lines`) cost ≈1.5× the
 * CPU of DuckDB writing the same bytes itself (docs/performance.md), and
 * the two-step way by hand — DuckDB `COPY … TO file`, then `\copy … FROM
 * file` — runs the two halves one after the other.
 *
 * The fields are the ones `duckCsvField` builds (source-query.ts), byte for
 * byte: numbers, dates and times as DuckDB's VARCHAR casts, unquoted; text,
 * JSON and other types always quoted (`FORCE_QUOTE`), so an empty string
 * (`""`) stays apart from NULL (an empty unquoted field).
 *
 * The pipe is read by a `cat` child process, whose stdout is an ordinary
 * pipe of this thread's event loop: reading the named pipe on this thread
 * would take a libuv pool thread per blocked read (DuckDB's COPY holds one
 * too, so four such streams at once would stall every pool thread), and a
 * socket over a descriptor that `fs` opened leaves it in a worker thread's
 * list of descriptors to close at exit after the socket closed it. `cat`
 * starts first and waits in its open for DuckDB's, so neither blocks for
 * good. A consumer that stops early (or a cancel) kills `cat`: DuckDB's next
 * write fails (broken pipe) and its COPY ends; a COPY that fails (an
 * interrupt on cancel, an SQL error) kills `cat` and fails the stream. The
 * temp directory goes in every case.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { quoteString } from '../targets/literal.js';
import type { SourceColumn } from './column-types.js';
import type { DuckSession } from './duck-session.js';
import { duckCsvLineQuery, duckCsvValue } from './source-query.js';

/** Named pipes need a POSIX system; elsewhere the rows come as lines through the connection. */
export const namedPipes = process.platform !== 'win32';

/** The COPY statement writing `inner`'s rows to `path` as PostgreSQL CSV fields (see the header). */
export function duckCsvCopy(inner: string, columns: readonly SourceColumn[], path: string): string {
  const quoted: string[] = [];
  const fields = columns.map((c, i) => {
    const v = duckCsvValue(c);
    if (v.quoted) quoted.push(`c${i}`);
    return `${v.expr} AS c${i}`;
  });
  const force = quoted.length > 0 ? `, FORCE_QUOTE (${quoted.join(', ')})` : '';
  return `COPY (SELECT ${fields.join(', ')} FROM (\n${inner}\n) AS _r) TO ${quoteString(path)} (FORMAT csv, HEADER false, USE_TMP_FILE false${force})`;
}

/** The CSV bytes of `inner`'s rows (`columns` in order), as they are written. */
export async function* duckCsvOut(s: DuckSession, inner: string, columns: readonly SourceColumn[]): AsyncGenerator<Buffer> {
  if (!namedPipes || columns.length === 0) {
    for await (const text of s.lines(duckCsvLineQuery(inner, columns))) yield Buffer.from(text);
    return;
  }
  s.check();
  const dir = await mkdtemp(join(tmpdir(), 'service-replication-'));
  let cat: ChildProcess | undefined;
  let copy: Promise<unknown> | undefined;
  let done = false;
  try {
    const fifo = join(dir, 'rows.csv');
    await promisify(execFile)('mkfifo', ['-m', '600', fifo]);
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
    cat = reader;
    await once(reader, 'spawn');
    copy = s.run(duckCsvCopy(inner, columns, fifo));
    copy.catch(() => reader.kill());
    for await (const chunk of reader.stdout) yield chunk as Buffer;
    await copy;
    done = true;
  } finally {
    if (!done) {
      cat?.kill();
      await copy?.catch(() => {});
    }
    await rm(dir, { recursive: true, force: true });
  }
}
