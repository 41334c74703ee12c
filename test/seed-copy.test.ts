// COPY encoding of seed rows (engine/seeds/csv-encode.ts), checked by loading
// into a real PostgreSQL: '' stays distinct from NULL, '007' keeps its zeros,
// commas/quotes/newlines and a lone `\.` survive, and typed seed renderings
// (A7 and JSON seeds) are accepted by the inferred PostgreSQL column types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { encodeCopyCsv, encodeCopyCsvChunks } from '../engine/seeds/csv-encode.js';
import { POSTGRES_TYPES } from '../engine/seeds/infer.js';
import { parseSeedText, type SeedTable } from '../engine/seeds/seed-table.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('encodeCopyCsv text: NULL unquoted empty, empty string and specials quoted', () => {
  assert.equal(encodeCopyCsv([['007', null, ''], ['a,b', 'say "hi"', 'x\ny'], ['\\.', ' s ', 'null']]),
    '007,,""\n"a,b","say ""hi""","x\ny"\n"\\.", s ,null\n');
  assert.equal(encodeCopyCsv([]), '');
  assert.deepEqual([...encodeCopyCsvChunks([['1'], ['2'], ['3']], 2)], ['1\n2\n', '3\n']);
});

async function copyIn(client: pg.Client, table: string, rows: readonly (readonly (string | null)[])[]): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} FROM STDIN (FORMAT csv)`));
  await pipeline(Readable.from(encodeCopyCsvChunks(rows, 2)), stream);
}

async function loadSeed(client: pg.Client, table: string, seed: SeedTable): Promise<void> {
  const cols = seed.columns.map((c) => `"${c.name}" ${POSTGRES_TYPES[c.type]}`).join(', ');
  await client.query(`CREATE TABLE ${table} (${cols})`);
  await copyIn(client, table, seed.rows);
}

test('COPY round-trip into PostgreSQL', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('seed_test');
  const client = new pg.Client({ connectionString: db.url });
  client.on('error', () => {});
  try {
    await client.connect();

    await t.test('text values, empty string vs NULL', async () => {
      const rows: (string | null)[][] = [
        ['1', ''],
        ['2', null],
        ['3', '007'],
        ['4', 'a,b "quoted"\r\nsecond line'],
        ['5', '\\.'],
        ['6', '  padded  '],
        ['7', 'null'],
        ['8', 'back\\slash'],
        ['9', 'ünïcødé ✓'],
      ];
      await client.query('CREATE TABLE texts (id int, v text)');
      await copyIn(client, 'texts', rows);
      const got = await client.query<{ id: number; v: string | null }>('SELECT id, v FROM texts ORDER BY id');
      assert.deepEqual(got.rows.map((r) => [String(r.id), r.v]), rows);
    });

    await t.test('a one-column table with a NULL row', async () => {
      await client.query('CREATE TABLE one (v text)');
      await copyIn(client, 'one', [['a'], [null], ['']]);
      const got = await client.query<{ v: string | null }>('SELECT v FROM one');
      assert.deepEqual(got.rows.map((r) => r.v), ['a', null, '']);
    });

    await t.test('A7 seed loads with the inferred PostgreSQL types', async () => {
      const seed = parseSeedText('codes', 'zip,qty,price,flag,day,memo,mixed\n007,1,1.50,TRUE,2024-01-01,hello,1\n010,2,2,false,2024-01-02,,x\n', 'csv');
      await loadSeed(client, 'codes', seed);
      const cols = await client.query<{ column_name: string; data_type: string }>(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'codes' ORDER BY ordinal_position",
      );
      assert.deepEqual(cols.rows.map((r) => r.data_type), ['text', 'bigint', 'double precision', 'boolean', 'date', 'text', 'text']);
      const got = await client.query('SELECT zip, qty::text, price, flag, day::text, memo, mixed FROM codes ORDER BY zip');
      assert.deepEqual(got.rows, [
        { zip: '007', qty: '1', price: 1.5, flag: true, day: '2024-01-01', memo: 'hello', mixed: '1' },
        { zip: '010', qty: '2', price: 2, flag: false, day: '2024-01-02', memo: null, mixed: 'x' },
      ]);
    });

    await t.test('timestamps, int64 bounds and JSON seeds load as typed', async () => {
      const csv = parseSeedText('ts', 'big,t,tz\n9223372036854775807,2024-01-01T10:00:00.123456,2024-01-01T10:00:00Z\n-9223372036854775808,2024-02-29 23:59:59,2024-01-01 12:00:00+02:00\n', 'csv');
      assert.deepEqual(csv.columns.map((c) => c.type), ['integer', 'timestamp', 'timestamptz']);
      await loadSeed(client, 'ts', csv);
      const got = await client.query("SELECT big::text, t::text, (tz AT TIME ZONE 'UTC')::text AS tz FROM ts ORDER BY big");
      assert.deepEqual(got.rows, [
        { big: '-9223372036854775808', t: '2024-02-29 23:59:59', tz: '2024-01-01 10:00:00' },
        { big: '9223372036854775807', t: '2024-01-01 10:00:00.123456', tz: '2024-01-01 10:00:00' },
      ]);

      const json = parseSeedText('j', '{"id":1,"doc":{"k":"v, \\"q\\""},"m":"a"}\n{"id":2,"doc":[1,2],"m":3}\n', 'json');
      assert.deepEqual(json.columns.map((c) => c.type), ['integer', 'json', 'text']);
      await loadSeed(client, 'j', json);
      const docs = await client.query('SELECT id::int AS id, doc, m FROM j ORDER BY id');
      assert.deepEqual(docs.rows, [
        { id: 1, doc: { k: 'v, "q"' }, m: 'a' },
        { id: 2, doc: [1, 2], m: '3' },
      ]);
    });
  } finally {
    await client.end().catch(() => {});
    await db.drop();
  }
});
