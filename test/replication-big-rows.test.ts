/**
 * Rows over DuckDB's 16 MiB CSV line limit (issue 12 item 14): the stream
 * fails with a message naming the stream, the row and the column, instead of
 * an error that quotes megabytes of the row.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { fieldLengths } from '../engine/replication/oversized-row.js';
import { cli, tempDir } from './helpers/build-cli.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('field lengths of a CSV row with quoted commas and doubled quotes', () => {
  assert.deepEqual(fieldLengths(Buffer.from('1,"a,b",,"x""y"')), [1, 5, 0, 6]);
});

test('a 17 MiB value into DuckDB: the error names the stream, row 3 and column "doc"', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_bigrow');
  try {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("create table public.docs (id int primary key, doc text); insert into public.docs values (1, 'a'), (2, 'b'), (3, repeat('x', 17 * 1024 * 1024)), (4, 'd')");
    await c.end();
    const dir = tempDir('svc-bigrow-');
    writeFileSync(join(dir, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${db.url}\n  LAKE:\n    type: duckdb\n    instance: lake.duckdb\n`);
    writeFileSync(join(dir, 'docs.yaml'), 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  docs:\n    sql: "select id, doc from public.docs order by id"\n    object: main.docs\n');
    const r = await cli('run', join(dir, 'docs.yaml'), '--json');
    assert.equal(r.code, 1, r.err);
    const exec = JSON.parse(r.out);
    assert.equal(exec.status, 'error');
    assert.equal(exec.error, 'docs: row 3 is 17.0 MiB, over DuckDB\'s 16 MiB line limit: column "doc" holds 17.0 MiB');
    assert.ok(r.err.length < 100_000, 'the log does not quote the row');
  } finally {
    await db.drop();
  }
});
