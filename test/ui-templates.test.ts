// The console's templates are .hbs files read beside their loader (http/ui/templates/index.ts):
// each one is there and compiles, and the build puts the same files beside the compiled loader
// in dist/ (scripts/copy-templates.ts), which is what `service serve` from the package reads.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Handlebars from 'handlebars';
import { TEMPLATES } from '../http/ui/templates/index.js';

const source = join(import.meta.dirname, '..', 'http', 'ui', 'templates');
const built = join(import.meta.dirname, '..', 'dist', 'http', 'ui', 'templates');
const hbsFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.hbs')).sort();

test('every template is a .hbs file that compiles, and every .hbs file is a template', () => {
  assert.deepEqual(hbsFiles(source), Object.keys(TEMPLATES).map((n) => `${n}.hbs`).sort());
  for (const [name, text] of Object.entries(TEMPLATES)) assert.doesNotThrow(() => Handlebars.precompile(text), name);
});

test('the build copies the templates beside the compiled loader', () => {
  assert.deepEqual(hbsFiles(built), hbsFiles(source));
  for (const n of hbsFiles(source)) assert.equal(readFileSync(join(built, n), 'utf8'), readFileSync(join(source, n), 'utf8'), n);
});
