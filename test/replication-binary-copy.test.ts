// PostgreSQL → DuckDB in binary COPY: numerics scaled and rounded as
// DuckDB's DECIMAL cast does (or refused, naming the row and column), the
// reader giving the same blocks however the stream is cut into chunks (a
// tuple split anywhere, a value of hundreds of kilobytes across many
// chunks), truncated and foreign streams refused; and end to end, the edge
// values of every decoded type (extremes, ±infinity, dates before 1970 and
// 2000, microseconds, NaN, empty strings against NULL, jsonb, arrays, and the
// types that travel as text) arrive as PostgreSQL holds them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pgColumn } from '../engine/replication/column-types.js';
import { binaryColumn } from '../engine/replication/pg-binary-columns.js';
import { CopyBinaryReader, type Block } from '../engine/replication/pg-copy-reader.js';
import { numericScaled, numericText } from '../engine/replication/pg-numeric.js';
import { duckRows, pgQuery, replicationFile } from './helpers/replication-fixtures.js';
import { replicationSuite } from './helpers/replication-env.js';

/** A decimal literal in PostgreSQL's binary numeric form (base-10000 digits). */
function numeric(text: string): Buffer {
  const special = { NaN: 0xc000, Infinity: 0xd000, '-Infinity': 0xf000 }[text];
  const head = (nd: number, weight: number, sign: number, dscale: number) => {
    const b = Buffer.alloc(8);
    b.writeInt16BE(nd, 0);
    b.writeInt16BE(weight, 2);
    b.writeUInt16BE(sign, 4);
    b.writeInt16BE(dscale, 6);
    return b;
  };
  if (special !== undefined) return head(0, 0, special, 0);
  const negative = text.startsWith('-');
  const [int = '', frac = ''] = (negative ? text.slice(1) : text).split('.');
  const digits = int.replace(/^0+/, '');
  const intPart = digits.padStart(Math.ceil(digits.length / 4) * 4, '0');
  const fracPart = frac.padEnd(Math.ceil(frac.length / 4) * 4, '0');
  const groups = (intPart + fracPart).match(/.{4}/g)?.map(Number) ?? [];
  let weight = intPart.length / 4 - 1;
  while (groups.length > 0 && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
  if (groups.length === 0) weight = 0;
  const body = Buffer.alloc(groups.length * 2);
  groups.forEach((g, i) => body.writeInt16BE(g, 2 * i));
  return Buffer.concat([head(groups.length, weight, negative ? 0x4000 : 0, frac.length), body]);
}

const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.length);

test('numerics: scaled to the column, rounded half away from zero, too wide or NaN refused', () => {
  const scaled = (text: string, p: number, s: number) => numericScaled(view(numeric(text)), 0, p, s);
  assert.equal(scaled('12.3400', 18, 4), 123400);
  assert.equal(scaled('-0.05', 18, 4), -500);
  assert.equal(scaled('0', 4, 1), 0);
  assert.equal(scaled('1.23455', 18, 4), 12346);
  assert.equal(scaled('-1.23455', 18, 4), -12346);
  assert.equal(scaled('1.23454999', 18, 4), 12345);
  assert.equal(scaled('9999.99995', 9, 4), 100000000);
  assert.equal(scaled('120000', 9, 2), 12000000);
  assert.equal(scaled('123456789012345678.1234', 38, 4), 1234567890123456781234n);
  assert.equal(scaled('-99999999999999999999999999999999.999999', 38, 6), -99999999999999999999999999999999999999n);
  assert.throws(() => scaled('12345.6', 4, 1), /numeric value 12345\.6 does not fit DECIMAL\(4,1\)/);
  assert.throws(() => scaled('1000000000000000000000000000000000.000000', 38, 6), /does not fit DECIMAL\(38,6\)/);
  assert.throws(() => scaled('NaN', 18, 2), /numeric value NaN cannot be stored in DECIMAL\(18,2\)/);
  assert.deepEqual(['12.3400', '-0.05', '100000000', '0.0001', '0', '-123456789.000', 'NaN', '-Infinity'].map((t) => numericText(view(numeric(t)), 0)),
    ['12.3400', '-0.05', '100000000', '0.0001', '0', '-123456789.000', 'NaN', '-Infinity']);
});

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const int16 = (v: number) => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b; };
const int32 = (v: number) => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b; };
const int64 = (v: bigint) => { const b = Buffer.alloc(8); b.writeBigInt64BE(v); return b; };

/** A binary COPY stream of `rows` (each field's bytes, or null). */
function copyStream(rows: readonly (readonly (Buffer | null)[])[], trailer = true): Buffer {
  const parts: Buffer[] = [SIGNATURE, int32(0), int32(0)];
  for (const row of rows) {
    parts.push(int16(row.length));
    for (const f of row) parts.push(...(f === null ? [int32(-1)] : [int32(f.length), f]));
  }
  if (trailer) parts.push(int16(-1));
  return Buffer.concat(parts);
}

const COLUMNS = [
  binaryColumn(pgColumn('i', 'integer', true), 'INTEGER'),
  binaryColumn(pgColumn('t', 'text', true), 'VARCHAR'),
  binaryColumn(pgColumn('ts', 'timestamp without time zone', true), 'TIMESTAMP'),
  binaryColumn(pgColumn('n', 'numeric(9,2)', true), 'DECIMAL(9,2)'),
];
const NAMES = ['i', 't', 'ts', 'n'];
const BIG = Buffer.alloc(300_000, 'y');
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** PostgreSQL timestamp of row i: ±infinity, then days either side of 2000-01-01 and 1970-01-01. */
const pgMicros = (i: number) => (i === 0 ? INT64_MIN : i === 1 ? INT64_MAX : BigInt(i - 2500) * 86_400_000_000n * 9n + 123n);

function sampleRows(n: number): (Buffer | null)[][] {
  return Array.from({ length: n }, (_, i) => [
    int32(i - 1000),
    i % 7 === 3 ? null : i === 1234 ? BIG : Buffer.from(i % 11 === 5 ? '' : `v${i} "é"`),
    int64(pgMicros(i)),
    i % 5 === 4 ? null : numeric(`${i}.${String(i % 100).padStart(2, '0')}`),
  ]);
}

function decode(stream: Buffer, chunk: number): Block[] {
  const blocks: Block[] = [];
  const reader = new CopyBinaryReader(COLUMNS, NAMES, (b) => blocks.push(b));
  for (let at = 0; at < stream.length; at += chunk) reader.push(stream.subarray(at, at + chunk));
  reader.end();
  return blocks;
}

/** What a block hands DuckDB: the fixed-width bytes, the variable-length values and the validity of its rows. */
function digest(blocks: readonly Block[]): string {
  const h = createHash('sha256');
  for (const b of blocks) {
    h.update(`rows ${b.rows};`);
    COLUMNS.forEach((c, k) => {
      const data = b.data[k];
      if (data !== undefined) h.update(new Uint8Array(data, 0, b.rows * c.width));
      const v = b.values[k];
      for (let r = 0; v !== undefined && r < b.rows; r++) h.update(v.length[r]! < 0 ? 'NULL;' : new Uint8Array(v.source[r]!, v.offset[r], v.length[r]));
      if (b.hasNull[k] === 1) h.update(new Uint8Array(b.validity[k]!.buffer, 0, Math.ceil(b.rows / 8)));
    });
  }
  return h.digest('hex');
}

test('binary COPY reader: the same blocks however the stream is cut, values in DuckDB\'s layout', () => {
  const stream = copyStream(sampleRows(5000));
  const whole = decode(stream, stream.length);
  assert.deepEqual(whole.map((b) => b.rows), [2048, 2048, 904]);
  for (const size of [1, 7, 64, 4096, 65536]) assert.equal(digest(decode(stream, size)), digest(whole), `chunks of ${size} bytes`);

  const at = (r: number) => ({ b: whole[Math.floor(r / 2048)]!, i: r % 2048 });
  const isNull = (r: number, k: number) => { const { b, i } = at(r); return b.hasNull[k] === 1 && (b.validity[k]![i >>> 5]! & (1 << (i & 31))) === 0; };
  const int = (r: number) => { const { b, i } = at(r); return new Int32Array(b.data[0]!)[i]; };
  const text = (r: number) => { const { b, i } = at(r); const v = b.values[1]!; return Buffer.from(v.source[i]!, v.offset[i], v.length[i]).toString(); };
  const micros = (r: number) => { const { b, i } = at(r); return new BigInt64Array(b.data[2]!)[i]; };
  const cents = (r: number) => { const { b, i } = at(r); return new Int32Array(b.data[3]!)[i]; };
  assert.deepEqual([int(0), int(4999), text(2), text(5), text(1234).length, isNull(3, 1), isNull(2, 1)], [-1000, 3999, 'v2 "é"', '', 300_000, true, false]);
  assert.deepEqual([micros(0), micros(1)], [-INT64_MAX, INT64_MAX], '±infinity: DuckDB\'s own');
  for (const r of [2, 1000, 2500, 2501, 4999]) assert.equal(micros(r), pgMicros(r) + 946_684_800_000_000n, `timestamp of row ${r} moved to the 1970 epoch`);
  assert.deepEqual([cents(12), cents(4998), isNull(4, 3), isNull(12, 3)], [1212, 499898, true, false]);
});

test('binary COPY reader: a wrong field count, a cut stream, a foreign stream and a value too wide are refused', () => {
  const reader = () => new CopyBinaryReader(COLUMNS, NAMES, () => {});
  assert.throws(() => reader().push(copyStream([[int32(1), null]])), /a COPY row has 2 fields where 4 columns were expected/);
  const cut = reader();
  cut.push(copyStream(sampleRows(3), false));
  assert.throws(() => cut.end(), /the COPY stream ended before its trailer/);
  assert.throws(() => reader().push(Buffer.from('1,a,b,c\n'.repeat(5))), /not in PostgreSQL binary format/);
  assert.throws(() => reader().push(copyStream([[int32(1), null, null, numeric('1.5')], [int32(2), null, null, numeric('12345678.9')]])),
    /row 2, column "n": numeric value 12345678\.9 does not fit DECIMAL\(9,2\)$/);
  assert.throws(() => reader().push(copyStream([[int32(1), null, Buffer.alloc(4), null]])), /row 1, column "ts": a 4-byte value where 8 bytes were expected/);
});

const ready = replicationSuite('repl_bin', async (env) => {
  await pgQuery(env.db.url, `
create type mood as enum ('sad', 'happy');
create table public.edges (
  id int primary key, i2 smallint, i8 bigint, r real, f double precision,
  n4 numeric(4,1), n9 numeric(9,3), n18 numeric(18,6), n38 numeric(38,10), n50 numeric(50,5), nu numeric,
  d date, ts timestamp, tstz timestamptz, tm time, tz timetz, iv interval,
  t text, c char(4), ch "char", b bytea, u uuid, j json, jb jsonb, arr int[], m mood, cash money, ip inet, bo boolean);
insert into public.edges values
 (1, -32768, -9223372036854775808, '-Infinity', 'NaN', -999.9, -123456.789, -123456789012.345678, -1234567890123456789012345678.0123456789,
  -123456789012345678901234567890123456789012345.12345, -0.5, '-infinity', '-infinity', '-infinity', '00:00', '00:00:00+05:30',
  '-1 year -2 days -00:00:00.000001', '', 'ab', 'x', '\\x', '00000000-0000-0000-0000-000000000000', '{"a" : [1, 2]}', '{"b": null}', '{}', 'sad', -1.5, '10.0.0.1/8', false),
 (2, 32767, 9223372036854775807, 'Infinity', 1.5e308, 999.9, 123456.789, 999999999999.999999, 9999999999999999999999999999.9999999999,
  1.5, 12345678901234.123456, 'infinity', 'infinity', 'infinity', '24:00:00', '23:59:59.999999-12', '178000000 years', E'é"\\\\\\t\\n', 'abcd', 'y', '\\x00ff00',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '"str"', '{1,NULL,3}', 'happy', 0, '::1', true),
 (3, 0, 0, 0.5, -0.0, 0, 0.001, 0.000001, 0.0000000001, 0, 0, '1969-12-31', '1900-01-01 00:00:00.000001', '1999-12-31 23:59:59.999999+00', '12:34:56.789', null,
  '1 mon 2 days 03:04:05.000006', 'x', null, null, null, null, null, null, null, null, null, null, null),
 (4, null, null, null, null, null, null, null, null, null, null, '0001-01-01', '4000-12-31 23:59:59.999999', '1970-01-01 00:00:00+00', null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
 (5, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null)`);
});

test('PostgreSQL → DuckDB: edge values of every type arrive as PostgreSQL holds them', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const r = await e.run(replicationFile('source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.edges:\n    object: main.edges\n'));
  assert.equal(r.status, 'success', JSON.stringify(r.tasks));
  assert.equal(r.rows, 5);
  const types = await duckRows(e.lake, "select data_type from information_schema.columns where table_schema = 'main' and table_name = 'edges' order by ordinal_position");
  assert.deepEqual(types.map((x) => x[0]), [
    'INTEGER', 'SMALLINT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(4,1)', 'DECIMAL(9,3)', 'DECIMAL(18,6)', 'DECIMAL(38,10)', 'VARCHAR', 'DECIMAL(38,6)',
    'DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIME', 'TIME WITH TIME ZONE', 'INTERVAL',
    'VARCHAR', 'VARCHAR', 'VARCHAR', 'BLOB', 'UUID', 'JSON', 'JSON', 'JSON', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'BOOLEAN',
  ]);
  const numbers = await duckRows(e.lake, 'select i2::varchar, i8::varchar, r::varchar, f::varchar, n4::varchar, n9::varchar, n18::varchar, n38::varchar, n50, nu::varchar from main.edges order by id');
  assert.deepEqual(numbers, [
    ['-32768', '-9223372036854775808', '-inf', 'nan', '-999.9', '-123456.789', '-123456789012.345678', '-1234567890123456789012345678.0123456789', '-123456789012345678901234567890123456789012345.12345', '-0.500000'],
    ['32767', '9223372036854775807', 'inf', '1.5e+308', '999.9', '123456.789', '999999999999.999999', '9999999999999999999999999999.9999999999', '1.50000', '12345678901234.123456'],
    ['0', '0', '0.5', '0.0', '0.0', '0.001', '0.000001', '0.0000000001', '0.00000', '0.000000'],
    [null, null, null, null, null, null, null, null, null, null],
    [null, null, null, null, null, null, null, null, null, null],
  ]);
  const times = await duckRows(e.lake, "select d::varchar, ts::varchar, strftime(tstz AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f'), isinf(tstz), tm::varchar, tz::varchar, iv::varchar from main.edges order by id");
  assert.deepEqual(times, [
    ['-infinity', '-infinity', '-infinity', true, '00:00:00', '00:00:00+05:30', '-1 year -2 days -00:00:00.000001'],
    ['infinity', 'infinity', 'infinity', true, '24:00:00', '23:59:59.999999-12', '178000000 years'],
    ['1969-12-31', '1900-01-01 00:00:00.000001', '1999-12-31 23:59:59.999999', false, '12:34:56.789', null, '1 month 2 days 03:04:05.000006'],
    ['0001-01-01', '4000-12-31 23:59:59.999999', '1970-01-01 00:00:00.000000', false, null, null, null],
    [null, null, null, null, null, null, null],
  ]);
  const texts = await duckRows(e.lake, 'select t, c, ch, hex(b), u::varchar, j::varchar, jb::varchar, arr::varchar, m, cash, ip, bo from main.edges order by id');
  assert.deepEqual(texts, [
    ['', 'ab  ', 'x', '', '00000000-0000-0000-0000-000000000000', '{"a" : [1, 2]}', '{"b": null}', '[]', 'sad', '-$1.50', '10.0.0.1/8', false],
    ['é"\\\t\n', 'abcd', 'y', '00FF00', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '"str"', '[1, null, 3]', 'happy', '$0.00', '::1/128', true],
    ['x', null, null, null, null, null, null, null, null, null, null, null],
    [null, null, null, null, null, null, null, null, null, null, null, null],
    [null, null, null, null, null, null, null, null, null, null, null, null],
  ]);
});

test('a load that fails inside DuckDB leaves the table as it was and DuckDB on all its threads', async (t) => {
  const e = await ready(t);
  if (!e) return;
  const threads = async () => Number((await duckRows(e.lake, "select current_setting('threads')"))[0]![0]);
  const before = await threads();
  await duckRows(e.lake, 'create table main.strict (id integer not null, v varchar); insert into main.strict values (7, \'kept\')');
  await pgQuery(e.db.url, "create table public.loose as select case when g = 3000 then null else g end as id, 'v' || g as v from generate_series(1, 5000) g");
  const r = await e.run(replicationFile('source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.loose:\n    object: main.strict\n    mode: truncate\n'));
  assert.equal(r.status, 'error');
  assert.match(r.tasks[0]!.error ?? '', /NOT NULL constraint failed/);
  assert.deepEqual(await duckRows(e.lake, 'select id, v from main.strict'), [[7, 'kept']]);
  assert.equal(await threads(), before);
  assert.ok(before > 1, 'the machine gives DuckDB more than one thread (else this proves nothing)');
});
