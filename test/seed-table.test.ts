// readSeedTable: the file-level entry for CSV/JSON seeds (CSV parsing,
// JSON and Parquet seeds, seed loading): decoding, dispatch by format, and the two error shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSeedTable } from '../engine/seeds/seed-table.js';
import { EngineError, errorChain } from '../engine/errors.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'seed-table-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('reads a CSV seed with a BOM and CRLF', () =>
  withDir(async (dir) => {
    const file = join(dir, 'codes.csv');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('zip,qty\r\n007,1\r\n')]));
    const table = await readSeedTable('codes', file, 'csv');
    assert.deepEqual(table, { columns: [{ name: 'zip', type: 'text' }, { name: 'qty', type: 'integer' }], rows: [['007', '1']] });
  }));

test('reads a JSON seed', () =>
  withDir(async (dir) => {
    const file = join(dir, 'j.json');
    await writeFile(file, '[{"a":1.5,"b":"2024-01-01"}]');
    const table = await readSeedTable('j', file, 'json');
    assert.deepEqual(table, { columns: [{ name: 'a', type: 'float' }, { name: 'b', type: 'date' }], rows: [['1.5', '2024-01-01']] });
  }));

test("an unreadable file is \"could not read seed '<n>': <cause>\"", () =>
  withDir(async (dir) => {
    const file = join(dir, 'missing.csv');
    await assert.rejects(readSeedTable('missing', file, 'csv'), (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.code, 'node');
      assert.match(errorChain(err), /^could not read seed 'missing': ENOENT: no such file or directory/);
      return true;
    });
  }));

test('content errors keep the seed-prefixed parse message', () =>
  withDir(async (dir) => {
    const empty = join(dir, 'e.csv');
    await writeFile(empty, '');
    await assert.rejects(readSeedTable('e', empty, 'csv'), { message: "seed 'e': file is empty" });
    const latin1 = join(dir, 'l.csv');
    await writeFile(latin1, Buffer.from([0x61, 0x0a, 0xe9, 0x0a])); // "a\n\xe9\n": not UTF-8
    await assert.rejects(readSeedTable('l', latin1, 'csv'), { message: "seed 'l': file is not valid UTF-8" });
  }));
