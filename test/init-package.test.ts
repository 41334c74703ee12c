/**
 * `service init` scaffolds a project that builds as is, and the npm package
 * ships what an installed `service` needs — dist/, bin/, docs, README,
 * LICENSE — and none of the repository's tests, benchmarks or CI files.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli, tempDir } from './helpers/build-cli.js';

test('service init writes a project whose models build with passing tests; it never overwrites', async () => {
  const dir = join(tempDir('svc-init-'), 'my-project');
  const init = await cli('init', dir);
  assert.equal(init.code, 0, init.err);
  assert.match(init.out, /^Created a build project in /);
  assert.equal(readFileSync(join(dir, 'models', 'service_build.yml'), 'utf8').includes('mode: full-refresh'), true);
  const run = await cli('build', 'run', join(dir, 'models'), '--json');
  assert.equal(run.code, 0, run.err);
  const out = JSON.parse(run.out);
  assert.deepEqual(out.results.map((r: { name: string; status: string }) => [r.name, r.status]), [
    ['raw.customers', 'success'],
    ['staging.stg_customers', 'success'],
    ['marts.customers_by_city', 'success'],
  ]);
  assert.ok(existsSync(join(dir, 'warehouse.duckdb')), 'the DuckDB file lives beside models/');
  const again = await cli('init', dir);
  assert.equal(again.code, 1);
  assert.equal(again.err, `fatal: ${join(dir, 'models', 'service_build.yml')} already exists; service init writes a new project and never overwrites files\n`);
  const help = await cli('init', '--help');
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage: service init \[DIR\]/);
  assert.match(help.out, /\nExamples:\n  npx service init /);
  const bad = await cli('init', '--force');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: unknown flag: --force/);
});

test('the package holds dist/, bin/, docs, README and LICENSE — no tests, benchmarks or CI files', () => {
  // --ignore-scripts: prepack would rebuild dist/ under the other tests' feet.
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: join(import.meta.dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
  for (const must of ['bin/service.js', 'dist/cli/main.js', 'dist/actors/worker-entry.js', 'schemas/replication.schema.json', 'docs/cli.md', 'LICENSE', 'README.md', 'package.json']) assert.ok(files.includes(must), `${must} is packed`);
  assert.deepEqual(files.filter((f) => /^(test|bench|\.ci|examples)\//.test(f) || f.endsWith('.ts') && !f.endsWith('.d.ts')), []);
});
