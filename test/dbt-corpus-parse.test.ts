// Every macro, test and model file of three public dbt packages (dbt_utils,
// dbt_date, audit_helper, kept unmodified beside the repository in
// ../shared/dbt-corpus) parses and compiles with our template engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJinja } from '../engine/template/jinja-compiler.js';

const CORPUS = fileURLToPath(new URL('../../shared/dbt-corpus', import.meta.url));
const PACKAGES = ['dbt-utils', 'dbt-date', 'dbt-audit-helper'];
const FOLDERS = ['macros', 'integration_tests/macros', 'integration_tests/tests', 'integration_tests/models'];

function sqlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.sql'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

test('every macro, test and model file of the dbt corpus parses', (t) => {
  if (!existsSync(CORPUS)) {
    t.skip(`no dbt corpus at ${CORPUS}`);
    return;
  }
  const files = PACKAGES.flatMap((p) => FOLDERS.flatMap((f) => sqlFiles(join(CORPUS, p, f))));
  const macroFiles = files.filter((f) => relative(CORPUS, f).split('/').includes('macros'));
  const failed: string[] = [];
  for (const file of files) {
    try {
      compileJinja(readFileSync(file, 'utf8'), relative(CORPUS, file));
    } catch (err) {
      const e = err as Error & { lineno?: number };
      failed.push(`${relative(CORPUS, file)}:${e.lineno ?? '?'}: ${e.message.split('\n').pop()}`);
    }
  }
  t.diagnostic(`dbt corpus: ${files.length - failed.length} of ${files.length} files parsed (${macroFiles.length} macro files), ${failed.length} failed`);
  assert.ok(macroFiles.length >= 100, `expected the packages' macro files, found ${macroFiles.length}`);
  assert.deepEqual(failed, []);
});
