/**
 * A DuckDB file `x.duckdb` is the catalog `x`: with a schema also named `x`,
 * the name `x.t` is ambiguous and DuckDB refuses it.
 * Builds and replications qualify such relations with their catalog.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckdbCatalogName, qualifyDuckdbRelation } from '../engine/targets/duckdb/catalog.js';
import { cli, tempDir } from './helpers/build-cli.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

async function rows(file: string, sql: string): Promise<unknown[][]> {
  const inst = await DuckDBInstance.create(file);
  const c = await inst.connect();
  try {
    return (await c.runAndReadAll(sql)).getRows();
  } finally {
    c.closeSync();
    inst.closeSync();
  }
}

test('catalog names: the file stem; relations are qualified only where the schema is the catalog', () => {
  assert.equal(duckdbCatalogName('/a/b/x.duckdb'), 'x');
  assert.equal(duckdbCatalogName('/a/b/my.lake.db'), 'my.lake');
  assert.equal(duckdbCatalogName(':memory:'), 'memory');
  assert.deepEqual(qualifyDuckdbRelation({ schema: 'x', name: 't' }, '/d/x.duckdb'), { database: 'x', schema: 'x', name: 't' });
  assert.deepEqual(qualifyDuckdbRelation({ schema: 'main', name: 't' }, '/d/x.duckdb'), { schema: 'main', name: 't' });
  assert.deepEqual(qualifyDuckdbRelation({ database: 'y', schema: 'x', name: 't' }, '/d/x.duckdb'), { database: 'y', schema: 'x', name: 't' });
});

test('build: models in schema "x" of x.duckdb are created and referenced as x.x.<name>', async () => {
  const dir = tempDir('svc-catalog-');
  mkdirSync(join(dir, 'x'));
  writeFileSync(join(dir, 'service_build.yml'), 'target: DK\n');
  writeFileSync(join(dir, 'env.yaml'), `connections:\n  DK:\n    type: duckdb\n    instance: x.duckdb\n`);
  writeFileSync(join(dir, 'x', 't.sql'), 'select 1 as a\n');
  writeFileSync(join(dir, 'x', 'u.sql'), "select a + 1 as b from {{ ref('t') }}\n");
  const r = await cli('build', 'run', dir, '--json');
  assert.equal(r.code, 0, r.err + r.out);
  const out = JSON.parse(r.out);
  assert.deepEqual(out.results.map((x: { name: string; status: string }) => [x.name, x.status]), [['x.x.t', 'success'], ['x.x.u', 'success']]);
  const compiled = JSON.parse((await cli('build', 'compile', dir, '--json')).out);
  assert.equal(compiled.nodes.find((n: { name: string }) => n.name === 'u').sql, 'select a + 1 as b from x.x.t');
  // Selectors still match the prod name.
  const sel = JSON.parse((await cli('build', 'list', dir, '-s', 'x.u', '--json')).out);
  assert.deepEqual(sel.map((n: { name: string }) => n.name), ['u']);
  assert.deepEqual(await rows(join(dir, 'x.duckdb'), 'select b from x.x.u'), [[2]]);
});

test('replication PostgreSQL → x.duckdb into object x.users', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_catalog');
  try {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("create table public.users (id int primary key, name text); insert into public.users values (1, 'ada'), (2, 'bob')");
    await c.end();
    const dir = tempDir('svc-catalog-repl-');
    writeFileSync(join(dir, 'env.yaml'), `connections:\n  WAREHOUSE:\n    url: ${db.url}\n  LAKE:\n    type: duckdb\n    instance: x.duckdb\n`);
    writeFileSync(join(dir, 'users.yaml'), 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: x.users\n    mode: full-refresh\n');
    const r = await cli('run', join(dir, 'users.yaml'), '--json');
    assert.equal(r.code, 0, r.err + r.out);
    assert.deepEqual(await rows(join(dir, 'x.duckdb'), 'select id, name from x.x.users order by id'), [
      [1, 'ada'],
      [2, 'bob'],
    ]);
  } finally {
    await db.drop();
  }
});
