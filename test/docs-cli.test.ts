/**
 * docs/cli.md is generated from the commands' own help texts; this fails
 * when a command's help changed and the page was not regenerated.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliReference } from '../cli/cli-reference.js';

test('docs/cli.md matches the commands\' --help (run `npm run docs:cli` after changing one)', () => {
  const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'cli.md'), 'utf8');
  assert.equal(page, cliReference(), 'docs/cli.md is stale: run `npm run docs:cli`');
  for (const command of ['serve', 'jobs list', 'conns test', 'build run', 'run', 'init', 'bench dag']) assert.ok(page.includes(`## \`service ${command}\``), command);
});
