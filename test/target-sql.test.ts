/**
 * SQL text the docs pin down (temp names, truncate, append, drops, incremental literals,
 * Merge shapes) and target selection (the unsupported-target message), without a
 * database: these are the strings both targets execute.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionFromEntry, connectionFromUrl } from '../engine/connections/parse-entry.js';
import { errorChain, EngineError } from '../engine/errors.js';
import { dropSql, insertSelectSql, probeColumnsSql } from '../engine/targets/dml-sql.js';
import { mergeSql } from '../engine/targets/merge-sql.js';
import { duckdbDialect } from '../engine/targets/duckdb/dialect.js';
import { zonedToUtc } from '../engine/targets/duckdb/seed.js';
import { dialectFor, openTarget } from '../engine/targets/index.js';
import { formatLiteral } from '../engine/targets/literal.js';
import { postgresDialect } from '../engine/targets/postgres/dialect.js';
import { postgresTypeFor } from '../engine/targets/postgres/parquet-source.js';
import { quoteRelation, relationText, tempRelation } from '../engine/targets/relation.js';
import { tempTablePattern } from '../engine/targets/temp-sweep.js';

const T = { schema: 'marts', name: 'fct' };
const TMP = { schema: 'marts', name: '_service_tmp_fct_abcdef' };
const ctx = { source: 'project' as const, baseDir: '/p', cwd: '/w' };

test('merge SQL for each strategy', () => {
  assert.deepEqual(mergeSql(T, TMP, ['id', 'k2', 'v'], ['id', 'k2'], 'delete+insert'), [
    'DELETE FROM "marts"."fct" AS tgt WHERE EXISTS (SELECT 1 FROM "marts"."_service_tmp_fct_abcdef" AS src WHERE src."id" = tgt."id" AND src."k2" = tgt."k2")',
    'INSERT INTO "marts"."fct" ("id", "k2", "v") SELECT "id", "k2", "v" FROM "marts"."_service_tmp_fct_abcdef"',
  ]);
  assert.deepEqual(mergeSql(T, TMP, ['id', 'v', 'w'], ['id'], 'update+insert'), [
    'UPDATE "marts"."fct" AS tgt SET "v" = src."v", "w" = src."w" FROM "marts"."_service_tmp_fct_abcdef" AS src WHERE tgt."id" = src."id"',
    'INSERT INTO "marts"."fct" ("id", "v", "w") SELECT "id", "v", "w" FROM "marts"."_service_tmp_fct_abcdef" AS src WHERE NOT EXISTS (SELECT 1 FROM "marts"."fct" AS tgt WHERE tgt."id" = src."id")',
  ]);
  assert.equal(mergeSql(T, TMP, ['id'], ['id'], 'update+insert').length, 1, 'no UPDATE when every column is a key');
  assert.deepEqual(mergeSql(T, TMP, ['id', 'v'], ['id'], 'insert'), [
    'INSERT INTO "marts"."fct" ("id", "v") SELECT "id", "v" FROM "marts"."_service_tmp_fct_abcdef" AS src WHERE NOT EXISTS (SELECT 1 FROM "marts"."fct" AS tgt WHERE tgt."id" = src."id")',
  ]);
});

test('statement shapes', () => {
  assert.equal(probeColumnsSql('select 1 -- c'), 'SELECT * FROM (\nselect 1 -- c\n) AS _service_src LIMIT 0');
  assert.equal(insertSelectSql(T, ['a', 'b'], 'select 1'), 'INSERT INTO "marts"."fct" ("a", "b") SELECT "a", "b" FROM (\nselect 1\n) AS _service_src');
  assert.equal(dropSql('view', T, true), 'DROP VIEW IF EXISTS "marts"."fct" CASCADE');
  assert.equal(dropSql('table', T, false, false), 'DROP TABLE "marts"."fct"');
});

test('temp relation names: safe characters, run id, 63-byte limit, same schema and database, unique for long names', () => {
  assert.deepEqual(tempRelation({ schema: 's', name: 'orders_v2' }, 'abcdef'), { schema: 's', name: '_service_tmp_orders_v2_abcdef' });
  assert.match(tempRelation({ schema: 's', name: 'my-model.v2' }, 'abcdef').name, /^_service_tmp_my_model_v2_[0-9a-f]{8}_abcdef$/);
  assert.notEqual(tempRelation({ schema: 's', name: 'a-b' }, 'r').name, tempRelation({ schema: 's', name: 'a_b' }, 'r').name);
  const long = tempRelation({ database: 'lake', schema: 's', name: 'x'.repeat(80) }, 'abcdef');
  assert.equal(Buffer.byteLength(long.name), 63);
  assert.match(long.name, new RegExp(`^_service_tmp_${'x'.repeat(34)}_[0-9a-f]{8}_abcdef$`));
  assert.equal(long.database, 'lake');
  // Two long names with a common 60-character prefix: distinct temp tables, both within 63 bytes.
  const prefix = 'raw_'.padEnd(60, 'p');
  const [a, b] = [`${prefix}_customers`, `${prefix}_orders`].map((n) => tempRelation({ schema: 's', name: n }, '123456b').name);
  assert.notEqual(a, b);
  assert.ok(Buffer.byteLength(a!) <= 63 && Buffer.byteLength(b!) <= 63);
  assert.match(a!, new RegExp(tempTablePattern(['exec-0000123456'])));
  assert.match(tempRelation({ schema: 's', name: 'é' }, 'abcdef').name, /^_service_tmp___[0-9a-f]{8}_abcdef$/);
});

test('quoting and plain names', () => {
  assert.equal(quoteRelation({ database: 'db', schema: 'we"ird', name: 'Orders' }), '"db"."we""ird"."Orders"');
  assert.equal(relationText({ database: 'db', schema: 's', name: 'n' }), 'db.s.n');
  assert.equal(relationText({ schema: 's', name: 'n' }), 's.n');
});

test('literal formats', () => {
  assert.equal(formatLiteral('number', '42'), '42');
  assert.equal(formatLiteral('date', '2024-02-03'), `'2024-02-03'`);
  assert.equal(formatLiteral('timestamp', '2024-02-03 04:05:06.000000'), `'2024-02-03 04:05:06'`);
  assert.equal(formatLiteral('timestamp', '2024-02-03 04:05:06.120000'), `'2024-02-03 04:05:06.120000'`);
  assert.equal(formatLiteral('timestamptz', '2024-02-03 02:05:06.000000'), `'2024-02-03T02:05:06Z'`);
  assert.equal(formatLiteral('string', "it's"), `'it''s'`);
  assert.equal(formatLiteral('number', null), null);
});

test('column types map to literal categories per dialect', () => {
  const pg = (t: string) => postgresDialect.valueCategory(t);
  assert.deepEqual(['integer', 'numeric', 'date', 'timestamp without time zone', 'timestamp with time zone', 'text', 'boolean'].map(pg), ['number', 'number', 'date', 'timestamp', 'timestamptz', 'string', 'boolean']);
  const dk = (t: string) => duckdbDialect.valueCategory(t);
  assert.deepEqual(['BIGINT', 'DECIMAL(18,3)', 'DATE', 'TIMESTAMP_NS', 'TIMESTAMP WITH TIME ZONE', 'VARCHAR', 'INTEGER[]'].map(dk), ['number', 'number', 'date', 'timestamp', 'timestamptz', 'string', 'string']);
  assert.equal(postgresDialect.seedColumnType('float'), 'double precision');
  assert.equal(duckdbDialect.seedColumnType('timestamptz'), 'TIMESTAMPTZ');
});

test('DuckDB seeds apply timestamptz offsets before appending', () => {
  assert.equal(zonedToUtc('2024-01-02 05:04:05+02:00'), '2024-01-02 03:04:05Z');
  assert.equal(zonedToUtc('2024-03-01T00:30:00.123456+01'), '2024-02-29 23:30:00.123456Z');
  assert.equal(zonedToUtc('2023-12-31 23:00:00-05:30'), '2024-01-01 04:30:00Z');
  assert.equal(zonedToUtc('2024-01-02T03:04:05Z'), '2024-01-02T03:04:05Z');
  assert.equal(zonedToUtc('not a timestamp'), 'not a timestamp');
});

test('Parquet column types map to PostgreSQL types', () => {
  assert.deepEqual(
    ['BIGINT', 'DECIMAL(10,2)', 'VARCHAR', 'TIMESTAMP WITH TIME ZONE', 'STRUCT(k INTEGER)', 'INTEGER[]', 'MAP(VARCHAR, INTEGER)', 'BLOB', 'UBIGINT'].map(postgresTypeFor),
    ['bigint', 'numeric(10,2)', 'text', 'timestamptz', 'jsonb', 'jsonb', 'jsonb', 'bytea', 'numeric(20,0)'],
  );
});

test('openTarget picks the target by type and rejects others with the unsupported-target message', () => {
  const snow = connectionFromEntry('SNOW', { type: 'snowflake', account: 'x' }, ctx);
  assert.throws(
    () => openTarget(snow),
    (e: unknown) => e instanceof EngineError && e.code === 'target' && e.message === `target 'SNOW' has type 'snowflake'; service build supports postgres and duckdb`,
  );
  const files = connectionFromUrl('EXPORTS', 'file:///srv/exports', ctx);
  assert.throws(() => openTarget(files), /target 'EXPORTS' has type 'file'; service build supports postgres and duckdb/);
  const broken = connectionFromEntry('PG', { type: 'postgres', host: 'h', port: 'abc', user: 'u' }, ctx);
  assert.throws(
    () => openTarget(broken),
    (e: unknown) => e instanceof EngineError && e.code === 'connection' && errorChain(e) === `could not connect to 'PG': port must be an integer between 1 and 65535, got 'abc'`,
  );
  const duck = openTarget(connectionFromUrl('DUCK', 'duckdb://:memory:', ctx));
  assert.deepEqual([duck.type, duck.singleWriter, duck.defaultSchema], ['duckdb', true, 'main']);
  assert.equal(dialectFor('postgres'), postgresDialect);
  assert.equal(dialectFor('mysql'), undefined);
});

test('a PostgreSQL connect failure is `could not connect to <t>` without the password', async () => {
  const target = openTarget(connectionFromUrl('PG', 'postgresql://loader:sekret-pw@127.0.0.1:1/db', ctx), { connectTimeoutMs: 2000 });
  try {
    await assert.rejects(target.open(), (e: unknown) => {
      const text = errorChain(e);
      return e instanceof EngineError && e.code === 'connection' && text.startsWith(`could not connect to 'PG': `) && !text.includes('sekret-pw');
    });
  } finally {
    await target.close();
  }
});
