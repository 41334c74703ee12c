/**
 * DuckDB → PostgreSQL CSV written by DuckDB's CSV writer through a named
 * pipe (engine/replication/duckdb-csv-out.ts): the bytes are those of the
 * CSV lines built in SQL, and a consumer that stops early or a cancel ends
 * DuckDB's COPY and removes the temp directory.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckColumn } from '../engine/replication/column-types.js';
import { DuckSession } from '../engine/replication/duck-session.js';
import { duckCsvOut } from '../engine/replication/duckdb-csv-out.js';
import { duckCsvLineQuery } from '../engine/replication/source-query.js';

const TABLE = `CREATE TABLE t AS SELECT * FROM (VALUES
  (1, 'a"b', NULL::VARCHAR, 1.5::DECIMAL(18,4), TIMESTAMP '2020-01-02 03:04:05.5', TIMESTAMPTZ '2020-01-02 03:04:05+02', '{"k": [1, "x"]}'::JSON, true, '\\x00\\xFF'::BLOB, [1, 2]),
  (2, '', 'x,y', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (NULL, 'multi
line', ' lead', -0.0001, TIMESTAMP '1999-12-31 23:59:59', TIMESTAMPTZ '1970-01-01 00:00:00+00', 'null'::JSON, false, ''::BLOB, []::INTEGER[])
) v(i, s, u, n, ts, tstz, j, b, bl, l)`;

async function withTable(work: (s: DuckSession, inner: string, columns: ReturnType<typeof duckColumn>[], temp: string) => Promise<void>, signal = new AbortController().signal): Promise<void> {
  const temp = await mkdtemp(path.join(tmpdir(), 'csv-out-test-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    await conn.run("SET TimeZone = 'UTC'");
    await conn.run(TABLE);
    const columns = (await conn.runAndReadAll('DESCRIBE SELECT * FROM t')).getRowsJS().map((r) => duckColumn(String(r[0]), String(r[1])));
    await work(new DuckSession(conn, signal), `SELECT * FROM t`, columns, temp);
  } finally {
    conn.closeSync();
    instance.closeSync();
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    await rm(temp, { recursive: true, force: true });
  }
}

async function collect(it: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of it) parts.push(b);
  return Buffer.concat(parts).toString();
}

test('DuckDB writes the same CSV bytes as the lines built in SQL, and removes its temp directory', async () => {
  await withTable(async (s, inner, columns, temp) => {
    const lines = await collect((async function* () {
      for await (const text of s.lines(duckCsvLineQuery(inner, columns))) yield Buffer.from(text);
    })());
    assert.ok(lines.includes('"a""b"') && lines.includes(',"",'), lines);
    assert.equal(await collect(duckCsvOut(s, inner, columns)), lines);
    assert.deepEqual(await readdir(temp), []);
  });
});

test('a consumer that stops early ends DuckDB\'s COPY: the connection takes the next statement, the temp directory is gone', async () => {
  await withTable(async (s, _inner, columns, temp) => {
    const big = 'SELECT i, s, u, n, ts, tstz, j, b, bl, l FROM t, range(200000)';
    for await (const chunk of duckCsvOut(s, big, columns)) {
      assert.ok(chunk.length > 0);
      break;
    }
    assert.deepEqual(await readdir(temp), []);
    assert.deepEqual(await s.rows('SELECT 42'), [[42]]);
  });
});

test('a failing COPY fails the stream and leaves no temp directory', async () => {
  await withTable(async (s, _inner, columns, temp) => {
    await assert.rejects(collect(duckCsvOut(s, 'SELECT * FROM no_such_table', columns)), /no_such_table/);
    assert.deepEqual(await readdir(temp), []);
  });
});

test('cancelling while DuckDB writes fails the stream with cancelled', async () => {
  const ac = new AbortController();
  await withTable(async (s, _inner, columns, temp) => {
    const big = 'SELECT i, s, u, n, ts, tstz, j, b, bl, l FROM t, range(2000000)';
    const read = (async () => {
      for await (const _chunk of duckCsvOut(s, big, columns)) ac.abort();
    })();
    await assert.rejects(read, /cancelled/);
    assert.deepEqual(await readdir(temp), []);
  }, ac.signal);
});
