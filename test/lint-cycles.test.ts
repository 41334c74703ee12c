// The import-circle lint (scripts/lint-cycles.ts) sees circles import-x/no-cycle skips: type-only ones.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { importCircles, SOURCE_ROOTS } from '../scripts/lint-cycles.js';

test('a circle made of type imports and re-exports is found; a chain is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lint-cycles-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = { b?: B };\n");
    writeFileSync(join(dir, 'b.ts'), "export type { C as B } from './c.js';\n");
    writeFileSync(join(dir, 'c.ts'), "import { type A } from './a.js';\nexport type C = { a?: A };\n");
    writeFileSync(join(dir, 'd.ts'), "import type { A } from './a.js';\nexport type D = A;\n");
    const circles = importCircles([dir]);
    assert.deepEqual(circles.map((c) => c.map((f) => f.slice(dir.length + 1))), [['a.ts', 'b.ts', 'c.ts']]);
    writeFileSync(join(dir, 'c.ts'), 'export type C = { n: number };\n');
    assert.deepEqual(importCircles([dir]), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the repository has no import circle, type imports counted', () => {
  assert.deepEqual(importCircles(SOURCE_ROOTS).map((c) => c.join(' ')), []);
});
