// CSV seed parsing and conservative type inference
// Including acceptance example A7's column types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from '../engine/seeds/csv.js';
import { classifyValue, DUCKDB_TYPES, inferColumnTypes, POSTGRES_TYPES } from '../engine/seeds/infer.js';
import { parseSeedText } from '../engine/seeds/seed-table.js';
import { EngineError } from '../engine/errors.js';

function seedFails(text: string, message: string): void {
  assert.throws(
    () => parseCsv('s', text),
    (err: unknown) => err instanceof EngineError && err.code === 'node' && err.message === message,
  );
}

/** The inferred type of a one-column CSV holding `values` (quoted where spaces or commas need it). */
function typeOf(...values: string[]): string {
  const csv = `c\n${values.map((v) => (v.includes(',') || v.includes(' ') ? `"${v}"` : v)).join('\n')}\n`;
  return parseSeedText('s', csv, 'csv').columns[0].type;
}

test('A7: column types, values unchanged, NULL memo', () => {
  const table = parseSeedText(
    'codes',
    'zip,qty,price,flag,day,memo,mixed\n007,1,1.50,true,2024-01-01,hello,1\n010,2,2,false,2024-01-02,,x\n',
    'csv',
  );
  assert.deepEqual(table.columns, [
    { name: 'zip', type: 'text' },
    { name: 'qty', type: 'integer' },
    { name: 'price', type: 'float' },
    { name: 'flag', type: 'boolean' },
    { name: 'day', type: 'date' },
    { name: 'memo', type: 'text' },
    { name: 'mixed', type: 'text' },
  ]);
  assert.deepEqual(table.rows, [
    ['007', '1', '1.50', 'true', '2024-01-01', 'hello', '1'],
    ['010', '2', '2', 'false', '2024-01-02', null, 'x'],
  ]);
  assert.deepEqual(table.columns.map((c) => DUCKDB_TYPES[c.type]), ['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'DATE', 'VARCHAR', 'VARCHAR']);
  assert.deepEqual(table.columns.map((c) => POSTGRES_TYPES[c.type]), ['text', 'bigint', 'double precision', 'boolean', 'date', 'text', 'text']);
});

test('type mapping tables cover every logical type', () => {
  assert.deepEqual(POSTGRES_TYPES, {
    integer: 'bigint', float: 'double precision', boolean: 'boolean', date: 'date',
    timestamp: 'timestamp', timestamptz: 'timestamptz', text: 'text', json: 'jsonb',
  });
  assert.deepEqual(DUCKDB_TYPES, {
    integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN', date: 'DATE',
    timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ', text: 'VARCHAR', json: 'JSON',
  });
});

test('CSV: CRLF, missing final newline and BOM', () => {
  assert.deepEqual(parseCsv('s', 'a,b\r\n1,2\r\n3,4'), { header: ['a', 'b'], rows: [['1', '2'], ['3', '4']] });
  assert.deepEqual(parseCsv('s', '\uFEFFa,b\n1,2\n'), { header: ['a', 'b'], rows: [['1', '2']] });
});

test('CSV: quoting with "" escapes, delimiters and line breaks inside quotes', () => {
  const { rows } = parseCsv('s', 'a,b\n"x,""y""\r\nz",plain\n"",""""\n');
  assert.deepEqual(rows, [['x,"y"\r\nz', 'plain'], [null, '"']]);
});

test('CSV: headers kept as written; empty header becomes column_<i>', () => {
  assert.deepEqual(parseCsv('s', ' A ,,"b c",null,""\n1,2,3,4,5\n').header, [' A ', 'column_2', 'b c', 'null', 'column_5']);
});

test('CSV: duplicate header, including one produced by column_<i>', () => {
  seedFails('a,b,a\n', "seed 's': duplicate column 'a'");
  seedFails('column_2,\n', "seed 's': duplicate column 'column_2'");
});

test('CSV: wrong field count names the physical line where the record starts', () => {
  seedFails('a,b,c\n1,2,3\n1,2\n', "seed 's': line 3: expected 3 fields, got 2");
  seedFails('a,b\n"multi\nline",1\n"again\r\nhere",2,3\n', "seed 's': line 4: expected 2 fields, got 3");
  seedFails('a\r\n1\r\n2,3', "seed 's': line 3: expected 1 fields, got 2");
});

test('CSV: empty file and header-only file', () => {
  seedFails('', "seed 's': file is empty");
  seedFails('\uFEFF', "seed 's': file is empty");
  seedFails('\n\r\n', "seed 's': file is empty");
  const table = parseSeedText('s', 'a,b\n', 'csv');
  assert.deepEqual(table, { columns: [{ name: 'a', type: 'text' }, { name: 'b', type: 'text' }], rows: [] });
});

test('CSV: NULL is an empty field or unquoted null in any case; quoted "null" is text', () => {
  const { rows } = parseCsv('s', 'a,b,c,d,e,f\n,"",null,NULL,nUlL,"null"\n');
  assert.deepEqual(rows, [[null, null, null, null, null, 'null']]);
  assert.deepEqual(parseCsv('s', 'a,b\nnulls, null\n').rows, [['nulls', ' null']]);
});

test('CSV: a trailing comma is one more (NULL) field; blank lines are skipped', () => {
  assert.deepEqual(parseCsv('s', 'a,b\n1,\n\n2,3\n\n').rows, [['1', null], ['2', '3']]);
});

test('CSV: malformed quoting is reported with its line', () => {
  seedFails('a,b\n1,2\n"open,3\n', "seed 's': line 3: unterminated quoted field");
  seedFails('a,b\n"x"y,1\n', "seed 's': line 2: expected ',' or a line end after a closing quote");
  // A quote inside an unquoted field is data; a lone CR is data.
  assert.deepEqual(parseCsv('s', 'a,b\n5\'10",x\ry\n').rows, [['5\'10"', 'x\ry']]);
});

test('CSV: linear on large inputs (one huge quoted field, many rows)', () => {
  const n = 1_000_000;
  const big = parseCsv('s', `a\n"${'x""'.repeat(n)}"\n`);
  assert.equal(big.rows[0][0]!.length, 2 * n);
  const lines = Array.from({ length: 200_000 }, (_, i) => `${i},"v${i}",${i % 2 === 0}`).join('\n');
  const many = parseSeedText('s', `id,name,even\n${lines}`, 'csv');
  assert.equal(many.rows.length, 200_000);
  assert.deepEqual(many.columns.map((c) => c.type), ['integer', 'text', 'boolean']);
  assert.deepEqual(many.rows[199_999], ['199999', 'v199999', 'false']);
});

test('inference: integers within signed 64-bit range', () => {
  assert.equal(typeOf('0', '-0', '42', '-17'), 'integer');
  assert.equal(typeOf('9223372036854775807', '-9223372036854775808'), 'integer');
  assert.equal(typeOf('9223372036854775808'), 'text'); // 2^63
  assert.equal(typeOf('-9223372036854775809'), 'text');
  assert.equal(typeOf('123456789012345678901234'), 'text');
});

test('inference: leading zeros, signs, spaces, exponents and NaN keep text', () => {
  for (const v of ['007', '00.5', '+1', ' 1', '1 ', '1e5', '1.5E3', 'NaN', 'Infinity', '-', '1.', '.5', '0x10', '1_000']) {
    assert.equal(typeOf(v), 'text', v);
  }
  const { rows } = parseSeedText('s', 'c\n007\n 1\n', 'csv');
  assert.deepEqual(rows, [['007'], [' 1']]);
});

test('inference: float needs at least one decimal; integers mix in', () => {
  assert.equal(typeOf('1', '2.5', '-0.25', '0.0'), 'float');
  assert.equal(typeOf('1.50'), 'float');
  assert.equal(typeOf('1.5', 'abc'), 'text');
  assert.equal(typeOf('1.5', '9223372036854775808'), 'text'); // integers beyond 64 bits keep text even here
  assert.equal(typeOf(`${'9'.repeat(400)}.0`), 'text'); // beyond double range
});

test('inference: booleans are true/false in any case only; 0/1 stay integer', () => {
  assert.equal(typeOf('true', 'FALSE', 'True', 'fAlSe'), 'boolean');
  assert.equal(typeOf('yes', 'no'), 'text');
  assert.equal(typeOf('t', 'f'), 'text');
  assert.equal(typeOf('0', '1'), 'integer');
  assert.equal(typeOf('true', '1'), 'text');
  assert.deepEqual(parseSeedText('s', 'b\nTRUE\nFalse\n', 'csv').rows, [['true'], ['false']]);
});

test('inference: dates are valid calendar dates', () => {
  assert.equal(typeOf('2024-01-01', '2024-02-29', '2000-02-29', '9999-12-31'), 'date');
  assert.equal(typeOf('2024-02-30'), 'text');
  assert.equal(typeOf('2023-02-29'), 'text');
  assert.equal(typeOf('1900-02-29'), 'text');
  assert.equal(typeOf('2024-13-01'), 'text');
  assert.equal(typeOf('0000-01-01'), 'text');
  assert.equal(typeOf('2024-1-01'), 'text');
  assert.equal(typeOf('20240101'), 'integer');
});

test('inference: timestamps with space or T and up to 6 fraction digits', () => {
  assert.equal(typeOf('2024-01-01 10:00:00', '2024-01-01T23:59:59.123456', '2024-12-31 00:00:00.5'), 'timestamp');
  assert.equal(typeOf('2024-01-01 10:00:00.1234567'), 'text');
  assert.equal(typeOf('2024-01-01 24:00:00'), 'text');
  assert.equal(typeOf('2024-01-01 10:60:00'), 'text');
  assert.equal(typeOf('2024-01-01 10:00:60'), 'text');
  assert.equal(typeOf('2024-01-01 10:00'), 'text');
  assert.equal(typeOf('2024-02-30 10:00:00'), 'text');
  assert.equal(typeOf('2024-01-01t10:00:00'), 'text');
});

test('inference: timestamptz needs Z or ±HH:MM on every value', () => {
  assert.equal(typeOf('2024-01-01T10:00:00Z', '2024-01-01 10:00:00.5+02:00', '2024-01-01 10:00:00-05:30'), 'timestamptz');
  assert.equal(typeOf('2024-01-01T10:00:00Z', '2024-01-01 10:00:00'), 'text');
  assert.equal(typeOf('2024-01-01 10:00:00+0200'), 'text');
  assert.equal(typeOf('2024-01-01 10:00:00+02'), 'text');
  assert.equal(typeOf('2024-01-01 10:00:00z'), 'text');
  assert.equal(typeOf('2024-01-01 10:00:00+16:00'), 'text');
  assert.equal(typeOf('2024-01-01Z'), 'text');
});

test('inference: mixtures and all-NULL columns are text', () => {
  assert.equal(typeOf('2024-01-01', '2024-01-01 10:00:00'), 'text');
  assert.equal(typeOf('1', 'x'), 'text');
  assert.equal(typeOf('1', '2024-01-01'), 'text');
  assert.deepEqual(inferColumnTypes(2, [[null, '1'], [null, null]]), ['text', 'integer']);
  assert.deepEqual(inferColumnTypes(1, []), ['text']);
  assert.equal(classifyValue(''), 'text');
});
