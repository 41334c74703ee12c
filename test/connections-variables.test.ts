/**
 * `${NAME}` in env.yaml connection values: resolved from the
 * file's own `env:` map, then the environment; an unset one names the field
 * and the variable instead of a confusing URL-scheme complaint.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConnections } from '../engine/connections/index.js';
import { cli, tempDir } from './helpers/build-cli.js';

test('variables in env.yaml connections: from env:, from the environment, or a problem naming them', async () => {
  const dir = tempDir('svc-conn-vars-');
  const file = join(dir, 'env.yaml');
  writeFileSync(file, ['env:', '  LAKE_FILE: lake.duckdb', 'connections:', '  LAKE:', '    url: duckdb://${LAKE_FILE}', '  WH:', '    url: ${SVC_TEST_WH_URL}', '  WH2:', '    url: ${SVC_TEST_UNSET:-postgresql://u@h/db}', ''].join('\n'));
  const env = { SERVICE_HOME_DIR: tempDir('svc-home-') };
  const reg = loadConnections({ projectEnvFile: file, env, cwd: dir });
  assert.deepEqual(reg.get('LAKE'), { type: 'duckdb', name: 'LAKE', source: 'project', path: join(dir, 'lake.duckdb'), schema: 'main', cwdRelative: 'lake.duckdb' });
  assert.equal(reg.get('WH2')?.type, 'postgres');
  assert.deepEqual(
    reg.problems.map((p) => p.message),
    [`${file}: connection 'WH': url uses \${SVC_TEST_WH_URL} but SVC_TEST_WH_URL is not set (set it in the env: map of this file or in the environment)`],
  );
  process.env.SVC_TEST_WH_URL = 'postgresql://loader@db.internal/warehouse';
  try {
    const set = loadConnections({ projectEnvFile: file, env, cwd: dir });
    assert.equal(set.problems.length, 0);
    assert.equal(set.get('WH')?.type, 'postgres');
  } finally {
    delete process.env.SVC_TEST_WH_URL;
  }
  // A build whose target holds the unset variable says so.
  writeFileSync(join(dir, 'service_build.yml'), 'target: WH\n');
  writeFileSync(join(dir, 'a.sql'), 'select 1 as x\n');
  const r = await cli('build', 'run', dir);
  assert.equal(r.code, 1);
  assert.match(r.err, /connection 'WH': url uses \$\{SVC_TEST_WH_URL\} but SVC_TEST_WH_URL is not set/);
});
