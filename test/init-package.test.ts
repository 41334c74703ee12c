/**
 * `service init` scaffolds a project that builds as is, and the npm package
 * (service-orchestrator: the name `service` is someone else's) ships what an
 * installed `service` needs — dist/, bin/, docs, examples, README, LICENSE —
 * and none of the repository's tests, benchmarks or CI files.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { PACKAGE_NAME, commandFrom, schemaBase } from '../cli/invocation.js';
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
  assert.match(init.out, /\n  cd .* && npx service-orchestrator build run models\n$/, 'a temp dir is outside the repository: npx fetches the package by its own name');
  assert.match(readFileSync(join(dir, 'models', 'env.yaml'), 'utf8'), /^# yaml-language-server: \$schema=file:\/\/.*\/schemas\/env\.schema\.json\n/);
  assert.match(readFileSync(join(dir, 'models', 'service_build.yml'), 'utf8'), /^# yaml-language-server: \$schema=file:\/\/.*\/schemas\/service_build\.schema\.json\n/);
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

test('the package holds dist/, bin/, docs, examples, README and LICENSE — no tests, benchmarks, CI or DuckDB files; two commands', () => {
  // --ignore-scripts: prepack would rebuild dist/ under the other tests' feet.
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: join(import.meta.dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
  for (const must of ['bin/service.js', 'dist/cli/main.js', 'dist/actors/worker-entry.js', 'schemas/replication.schema.json', 'docs/cli.md', 'LICENSE', 'README.md', 'package.json', 'examples/shop/service_build.yml', 'examples/jobs/nightly.yaml']) assert.ok(files.includes(must), `${must} is packed`);
  assert.deepEqual(files.filter((f) => /^(test|bench|\.ci)\//.test(f) || /\.duckdb(\.wal)?$/.test(f) || f.endsWith('.ts') && !f.endsWith('.d.ts')), []);
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
  assert.equal(pkg.name, PACKAGE_NAME);
  assert.deepEqual(pkg.bin, { service: 'bin/service.js', [PACKAGE_NAME]: 'bin/service.js' });
});

test('the printed command is the one that works from where the user stands', () => {
  const root = join(import.meta.dirname, '..');
  assert.equal(commandFrom(join(root, 'x')), 'npx service', 'inside the repository');
  const elsewhere = tempDir('svc-where-');
  assert.equal(commandFrom(elsewhere, { script: join(root, 'bin', 'service.js'), path: '' }), `npx ${PACKAGE_NAME}`, 'a clone, used from outside it');
  // A global install: <prefix>/lib/node_modules/service-orchestrator, commands in <prefix>/bin.
  const prefix = tempDir('svc-prefix-');
  const pkg = join(prefix, 'lib', 'node_modules', PACKAGE_NAME);
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), '{}');
  writeFileSync(join(pkg, 'bin', 'service.js'), '', { mode: 0o755 });
  mkdirSync(join(prefix, 'bin'));
  for (const name of ['service', PACKAGE_NAME]) symlinkSync(join(pkg, 'bin', 'service.js'), join(prefix, 'bin', name));
  const other = tempDir('svc-sbin-');
  writeFileSync(join(other, 'service'), '', { mode: 0o755 });
  const script = join(prefix, 'bin', 'service');
  assert.equal(commandFrom(elsewhere, { root: pkg, script, path: join(prefix, 'bin') }), 'service');
  assert.equal(commandFrom(elsewhere, { root: pkg, script, path: `${other}${delimiter}${join(prefix, 'bin')}` }), PACKAGE_NAME, 'a system service comes first');
  assert.equal(commandFrom(elsewhere, { root: pkg, script, path: other }), script, 'the bin directory is not on PATH');
  assert.equal(schemaBase(elsewhere, { root: pkg }), `${pathToFileURL(join(realpathSync(pkg), 'schemas')).href}/`);
  // The package in a project's node_modules: npx finds it from inside the project.
  const proj = tempDir('svc-proj-');
  writeFileSync(join(proj, 'package.json'), '{}');
  const local = join(proj, 'node_modules', PACKAGE_NAME);
  mkdirSync(local, { recursive: true });
  assert.equal(commandFrom(join(proj, 'my-project'), { root: local, script: join(proj, 'node_modules', '.bin', 'service'), path: '' }), 'npx service');
  assert.equal(schemaBase(join(proj, 'my-project', 'models'), { root: local }), `../../node_modules/${PACKAGE_NAME}/schemas/`);
  // npx's copy of the published package: the same npx command, and the published schemas.
  const npx = join(tempDir('svc-cache-'), '_npx', '0123abcd', 'node_modules', PACKAGE_NAME);
  mkdirSync(npx, { recursive: true });
  assert.equal(commandFrom(elsewhere, { root: npx, script: join(npx, '..', '.bin', PACKAGE_NAME), path: '' }), `npx ${PACKAGE_NAME}`);
  assert.match(schemaBase(elsewhere, { root: npx }), new RegExp(`^https://unpkg\\.com/${PACKAGE_NAME}@\\d+\\.\\d+\\.\\d+/schemas/$`));
});
