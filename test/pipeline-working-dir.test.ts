/**
 * Working directories of pipeline steps: a relative
 * `duckdb://p.duckdb` target of a `build: shop` step creates `shop/p.duckdb`
 * — the build project's directory — and a query step's relative DuckDB URL
 * resolves against the project root; never
 * against the directory the command or the daemon was started from. Checked
 * with `service run` started elsewhere and with a daemon started elsewhere.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './helpers/build-cli.js';
import { BIN, daemonFixture, projectClient, startDaemonChild, until } from './helpers/daemon-child.js';

const ENV = 'connections:\n  LOCAL_DUCK:\n    url: duckdb://p.duckdb\n';
const FILES: Record<string, string> = {
  'shop/service_build.yml': 'target: LOCAL_DUCK\n',
  'shop/orders.sql': 'select 1 as id, 20 as amount\n',
  'pipe.yaml': [
    'steps:',
    '  - {id: b, build: shop}',
    '  - {id: q, type: query, connection: LOCAL_DUCK, query: "create table if not exists root_marker as select 1 as x"}',
    '',
  ].join('\n'),
};

/** Every file under `dir` (relative paths), for a precise "nowhere else" check. */
function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
}

function checkLayout(root: string, elsewhere: string): void {
  assert.ok(existsSync(join(root, 'shop', 'p.duckdb')), 'the build step\'s DuckDB file belongs in the build project');
  assert.ok(existsSync(join(root, 'p.duckdb')), 'the query step\'s DuckDB file belongs in the project root');
  assert.deepEqual(listFiles(elsewhere), [], 'nothing may land in the directory the command was started from');
}

test('service run pipe.yaml from another directory: build-step DuckDB file inside the build project', () => {
  const root = tempDir('svc-wd-root-');
  const elsewhere = tempDir('svc-wd-cwd-');
  mkdirSync(join(root, 'shop'));
  writeFileSync(join(root, 'env.yaml'), ENV);
  for (const [name, body] of Object.entries(FILES)) writeFileSync(join(root, name), body);
  const r = spawnSync(process.execPath, [BIN, 'run', join(root, 'pipe.yaml'), '--json'], { cwd: elsewhere, encoding: 'utf8', env: { ...process.env, SERVICE_HOME_DIR: tempDir('svc-wd-home-') } });
  assert.equal(r.status, 0, r.stderr);
  const exec = JSON.parse(r.stdout);
  assert.equal(exec.status, 'success', r.stdout);
  checkLayout(root, elsewhere);
});

test('through a daemon started in another directory: the same layout inside the project tree', async () => {
  const elsewhere = tempDir('svc-wd-cwd-');
  const { dataDir, token, projectId } = await daemonFixture('postgresql://unused@127.0.0.1:1/unused');
  writeFileSync(join(dataDir, 'projects', projectId, 'env.yaml'), ENV);
  const d = await startDaemonChild(dataDir, [], elsewhere);
  try {
    const api = projectClient(d.url, token);
    let jobId = '';
    for (const [name, body] of Object.entries(FILES)) {
      const saved = await api.post('/project/file/save', { file: { name, body } });
      assert.ok(!saved.error, JSON.stringify(saved));
      if (name === 'pipe.yaml') jobId = saved.default_job_id;
    }
    const execId = (await api.post('/project/job/run', { job_id: jobId })).exec_id as string;
    const done = await until(async () => {
      const e = await api.exec(execId);
      return e.status === 'queued' || e.status === 'running' ? undefined : e;
    }, 'the pipeline to finish');
    assert.equal(done.status, 'success', JSON.stringify(done));
    checkLayout(join(dataDir, 'projects', projectId, 'files'), elsewhere);
  } finally {
    d.child.kill('SIGTERM');
    await d.exited;
  }
});
