/**
 * SERVICE_STATE watermarks on DuckDB with a SQLite
 * state file: range.advance pages through the data one window per run, and
 * a stored bound (tier A) is used instead of MAX("k").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../engine/state/sqlite-database.js';
import { main } from '../cli/main.js';

async function run(dir: string, extra: string[] = [], env: Record<string, string> = {}) {
  const saved = { ...process.env };
  Object.assign(process.env, { DUCK: `duckdb://${join(dir, 'wh.duckdb')}`, SERVICE_STATE: join(dir, 'state.db') }, env);
  let out = '';
  let err = '';
  try {
    const code = await main(['build', 'run', dir, '--json', '-d', ...extra], { out: (t) => (out += t), err: (t) => (err += t) });
    return { code, payload: out ? JSON.parse(out) : undefined, err };
  } finally {
    process.env = saved;
  }
}

function project(frontMatterRange: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-state-'));
  writeFileSync(join(dir, 'service_build.yml'), 'target: DUCK\n');
  writeFileSync(join(dir, 'raw.csv'), 'id,updated_at\n1,2024-01-05 00:00:00\n2,2024-01-20 00:00:00\n3,2024-02-03 00:00:00\n');
  writeFileSync(
    join(dir, 'inc.sql'),
    `/**\nmode: incremental\nunique_key: id\nupdate_key: updated_at\n${frontMatterRange}**/\nselect id, updated_at from {{ ref('raw') }} where {{ incremental_where_cond() }}\n`,
  );
  return dir;
}

const stored = (dir: string) =>
  (openDatabase(join(dir, 'state.db')).prepare('select value from service_build_watermarks where model = ?').get('public.inc') as { value: string } | undefined)?.value;

test('range.advance pages one window per run and stores the upper bound', async () => {
  const dir = project("range: {start: '2024-01-01', advance: 14d}\n");
  const r1 = await run(dir);
  assert.equal(r1.code, 0, r1.err);
  assert.match(r1.err, /"updated_at" >= '2024-01-01' AND "updated_at" < '2024-01-15T00:00:00Z'/);
  assert.equal(r1.payload.results[1].rows, 1);
  assert.equal(stored(dir), "'2024-01-15T00:00:00Z'");
  const r2 = await run(dir);
  assert.match(r2.err, /"updated_at" >= '2024-01-15T00:00:00Z' AND "updated_at" < '2024-01-29T00:00:00Z'/);
  assert.equal(r2.payload.results[1].rows, 1);
  assert.equal(stored(dir), "'2024-01-29T00:00:00Z'");
});

test('range.advance without SERVICE_STATE is a node error', async () => {
  const dir = project("range: {start: '2024-01-01', advance: 14d}\n");
  const r = await run(dir, [], { SERVICE_STATE: '' });
  assert.equal(r.code, 1);
  assert.equal(r.payload.results[1].error, "model 'inc': range.advance requires SERVICE_STATE to be configured");
});

test('a stored watermark (tier A) bounds the next incremental run; --range leaves state alone', async () => {
  const dir = project('');
  assert.equal((await run(dir)).code, 0);
  assert.match(stored(dir) ?? '', /^'2024-02-03 00:00:00'$/);
  openDatabase(join(dir, 'state.db')).prepare("update service_build_watermarks set value = '''2024-01-10 00:00:00''' where model = 'public.inc'").run();
  const r = await run(dir, ['-s', 'inc']);
  assert.match(r.err, /"updated_at" > '2024-01-10 00:00:00'/);
  assert.equal(r.payload.results[0].rows, 2);
  assert.match(stored(dir) ?? '', /^'2024-02-03 00:00:00'$/);
  const ranged = await run(dir, ['-s', 'inc', '--range', '2024-01-01,2024-02-01']);
  assert.equal(ranged.code, 0, ranged.err);
  assert.match(stored(dir) ?? '', /^'2024-02-03 00:00:00'$/);
});

test('an unsupported SERVICE_STATE location fails the node', async () => {
  const dir = project('');
  await run(dir);
  const r = await run(dir, ['-s', 'inc'], { SERVICE_STATE: 'redis://localhost' });
  assert.equal(r.payload.results[0].error, "unsupported SERVICE_STATE location 'redis://localhost'");
});
