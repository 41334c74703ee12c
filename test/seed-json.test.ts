// JSON seeds: array or newline-delimited objects,
// union of keys, kind-based types and the mixed-kinds-are-text rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonSeed } from '../engine/seeds/json.js';
import { EngineError } from '../engine/errors.js';

function jsonFails(text: string, message: string | RegExp): void {
  assert.throws(
    () => parseJsonSeed('j', text),
    (err: unknown) =>
      err instanceof EngineError &&
      err.code === 'node' &&
      (typeof message === 'string' ? err.message === message : message.test(err.message)),
  );
}

const types = (text: string): Record<string, string> =>
  Object.fromEntries(parseJsonSeed('j', text).columns.map((c) => [c.name, c.type]));

test('JSON array: union of keys in first-seen order, missing keys and null are NULL', () => {
  const table = parseJsonSeed('j', '[{"id":1,"name":"a"},{"name":"b","extra":true},{"id":3,"name":null}]');
  assert.deepEqual(table.columns, [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text' },
    { name: 'extra', type: 'boolean' },
  ]);
  assert.deepEqual(table.rows, [
    ['1', 'a', null],
    [null, 'b', 'true'],
    ['3', null, null],
  ]);
});

test('newline-delimited objects, CRLF and blank lines, BOM removed', () => {
  const table = parseJsonSeed('j', '\uFEFF{"a":1}\r\n\r\n{"a":2,"b":"x"}\n');
  assert.deepEqual(table.columns.map((c) => c.name), ['a', 'b']);
  assert.deepEqual(table.rows, [['1', null], ['2', 'x']]);
});

test('a single (pretty-printed) object is one row', () => {
  assert.deepEqual(parseJsonSeed('j', '{\n  "a": "x"\n}\n').rows, [['x']]);
});

test('numbers: integers → integer, any non-integer → float', () => {
  assert.deepEqual(types('[{"i":1,"f":1.5,"m":2},{"i":-7,"f":2,"m":0.25}]'), { i: 'integer', f: 'float', m: 'float' });
  assert.deepEqual(parseJsonSeed('j', '[{"f":1.5},{"f":2}]').rows, [['1.5'], ['2']]);
});

test('booleans → boolean rendered true/false; objects and arrays → json', () => {
  const table = parseJsonSeed('j', '[{"b":true,"o":{"k":[1,"x"]}},{"b":false,"o":[1,2]}]');
  assert.deepEqual(table.columns, [{ name: 'b', type: 'boolean' }, { name: 'o', type: 'json' }]);
  assert.deepEqual(table.rows, [['true', '{"k":[1,"x"]}'], ['false', '[1,2]']]);
});

test('strings → text unless every string is a date, a timestamp or a timestamptz', () => {
  assert.deepEqual(
    types(`[
      {"d":"2024-01-01","t":"2024-01-01 10:00:00","z":"2024-01-01T10:00:00Z","s":"007","mix":"2024-01-01","bad":"2024-02-30"},
      {"d":"2024-12-31","t":"2024-01-01T10:00:00.5","z":"2024-01-01 10:00:00+02:00","s":"1","mix":"2024-01-01 10:00:00","bad":"2024-02-28"}
    ]`),
    { d: 'date', t: 'timestamp', z: 'timestamptz', s: 'text', mix: 'text', bad: 'text' },
  );
  assert.deepEqual(parseJsonSeed('j', '[{"s":"007"}]').rows, [['007']]);
});

test('mixed kinds → text, non-strings serialized as JSON text', () => {
  const table = parseJsonSeed('j', '[{"m":1},{"m":"x"},{"m":true},{"m":{"a":1}},{"m":[1]},{"m":null},{"m":2.5}]');
  assert.deepEqual(table.columns, [{ name: 'm', type: 'text' }]);
  assert.deepEqual(table.rows.map((r) => r[0]), ['1', 'x', 'true', '{"a":1}', '[1]', null, '2.5']);
  assert.equal(types('[{"m":"2024-01-01"},{"m":1}]').m, 'text');
  assert.equal(types('[{"m":true},{"m":1}]').m, 'text');
});

test('all-NULL columns are text; keys named like Object.prototype members are plain columns', () => {
  const table = parseJsonSeed('j', '[{"n":null,"constructor":1},{"n":null,"toString":"x"}]');
  assert.deepEqual(table.columns, [
    { name: 'n', type: 'text' },
    { name: 'constructor', type: 'integer' },
    { name: 'toString', type: 'text' },
  ]);
  assert.deepEqual(table.rows, [[null, '1', null], [null, null, 'x']]);
});

test('empty key becomes column_<i>; a clash is a duplicate column', () => {
  assert.deepEqual(parseJsonSeed('j', '[{"a":1,"":2}]').columns.map((c) => c.name), ['a', 'column_2']);
  jsonFails('[{"":1,"column_1":2}]', "seed 'j': duplicate column 'column_1'");
});

test('non-object elements are rejected', () => {
  for (const text of ['[1,2]', '[{"a":1},null]', '[[1]]', '"x"', '42', '{"a":1}\n[1]\n', '{"a":1}\n"s"\n']) {
    jsonFails(text, "seed 'j': expected JSON objects");
  }
});

test('empty files, no keys, and syntax errors', () => {
  jsonFails('', "seed 'j': file is empty");
  jsonFails(' \n\n', "seed 'j': file is empty");
  jsonFails('[]', "seed 'j': no columns: a JSON seed needs at least one key");
  jsonFails('[{},{}]', "seed 'j': no columns: a JSON seed needs at least one key");
  jsonFails('[{"a":1},', /^seed 'j': invalid JSON: /);
  jsonFails('{"a":1}\n{"a":\n', /^seed 'j': line 2: invalid JSON: /);
});
