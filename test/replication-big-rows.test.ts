/**
 * Rows over 16 MiB into DuckDB (a row past the CSV reader's 16 MiB line limit
 * used to fail): rows now travel as
 * binary COPY decoded column by column, which has no line limit, so a
 * 17 MiB value arrives intact — and the log never quotes it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { cli, tempDir } from './helpers/build-cli.js';
import { duckSql } from './helpers/duck-file.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('a 17 MiB value into DuckDB arrives intact, the rows around it too', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_bigrow');
  try {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("create table public.docs (id int primary key, doc text); insert into public.docs values (1, 'a'), (2, 'b'), (3, repeat('x', 17 * 1024 * 1024) || 'end'), (4, 'd')");
    const expected = (await c.query('select md5(doc) as h from public.docs where id = 3')).rows[0].h as string;
    await c.end();
    const dir = tempDir('svc-bigrow-');
    const lake = join(dir, 'lake.duckdb');
    writeFileSync(join(dir, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${db.url}\n  LAKE:\n    type: duckdb\n    instance: ${lake}\n`);
    writeFileSync(join(dir, 'docs.yaml'), 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  docs:\n    sql: "select id, doc from public.docs order by id"\n    object: main.docs\n');
    const r = await cli('run', join(dir, 'docs.yaml'), '--json');
    assert.equal(r.code, 0, r.err);
    const exec = JSON.parse(r.out);
    assert.equal(exec.status, 'success');
    assert.ok(r.err.length < 100_000, 'the log does not quote the row');
    const rows = await duckSql<unknown[][]>(lake, 'select id, length(doc), md5(doc) from main.docs order by id', 'rows-js');
    assert.deepEqual(rows.map((x) => [Number(x[0]), Number(x[1])]), [[1, 1], [2, 1], [3, 17 * 1024 * 1024 + 3], [4, 1]]);
    assert.equal(rows[2]![2], expected);
  } finally {
    await db.drop();
  }
});
