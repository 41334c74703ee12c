// The compiled binary end to end: `node
// bin/service.js` runs dist/ (built by `npm test`'s pretest), with the exit
// code and the stdout/stderr split a shell or a CI job sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { duckProject, warehouseCreated } from './helpers/build-cli.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'service.js');

function service(args: string[], cwd: string) {
  assert.ok(existsSync(join(ROOT, 'dist', 'cli', 'main.js')), 'dist/ is missing: run `npm run build` (npm test does it in pretest)');
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, SERVICE_LOGGING: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('bin/service.js build list: JSON on stdout and exit 0; errors on stderr with exits 1 and 2', () => {
  const dir = duckProject({ 'raw.csv': 'id\n1\n', 'staging/s.sql': "select * from {{ ref('raw') }}" });
  const ok = service(['build', 'list', dir, '--json'], ROOT);
  assert.deepEqual(ok, {
    code: 0,
    out: '[{"name":"raw","type":"seed","table":"public.raw","file":"raw.csv"},{"name":"s","type":"full-refresh","table":"staging.s","file":"staging/s.sql"}]\n',
    err: '',
  });
  // The path defaults to the working directory.
  assert.equal(service(['build', 'list', '--json'], dir).out, ok.out);
  const missing = service(['build', 'list', dir, '-s', 'nope', '--json'], ROOT);
  assert.deepEqual(missing, { code: 1, out: '', err: "fatal: could not compile build project: could not apply selectors: selector 'nope' not found.\n" });
  const usage = service(['build', 'list', dir, '--full-refresh'], ROOT);
  assert.deepEqual(usage, {
    code: 2,
    out: '',
    err: "error: flag --full-refresh is not valid for 'service build list' (applies to: run)\nRun 'service build list --help' for usage.\n",
  });
  assert.equal(warehouseCreated(dir), false);
});
