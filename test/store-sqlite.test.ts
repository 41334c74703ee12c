/**
 * The StateStore contract on the SQLite backend, plus what only SQLite has:
 * the file and its directory are created, WAL mode, and a state file made by
 * the build's watermark store before migrations existed is adopted in place.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase, pragma } from '../engine/state/sqlite-database.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { EXECUTION_JSON_SOURCES, PUBLIC_JSON } from '../engine/state/sqlite-execution-page.js';
import { SqliteReaders } from '../engine/state/sqlite-readers.js';
import { publicExecution } from '../engine/state/public-execution.js';
import { runStoreContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'store-sqlite-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

test('SQLite state store contract', async (t) => {
  await runStoreContract(t, {
    location: async () => join(dir, `case-${++n}`, 'state.db'),
    schemaVersions: async (location) => {
      const db = openDatabase(location, { readonly: true });
      try {
        return (db.prepare('SELECT version FROM schema_version ORDER BY version').all() as { version: number }[]).map((r) => r.version);
      } finally {
        db.close();
      }
    },
  });
});

test('the file and its directories are created, in WAL mode with foreign keys on', async () => {
  const file = join(dir, 'a', 'b', 'state.db');
  const store = await openStateStore(file);
  await store.close();
  const db = openDatabase(file);
  try {
    assert.deepEqual(pragma(db, 'journal_mode'), { journal_mode: 'wal' });
    assert.ok((db.prepare("SELECT name FROM sqlite_master WHERE name = 'executions_one_running_per_job'").get()), 'partial unique index exists');
  } finally {
    db.close();
  }
});

test('a state file written by the pre-migration watermark store is migrated in place', async () => {
  const file = join(dir, 'legacy.db');
  const legacy = openDatabase(file);
  legacy.exec('CREATE TABLE IF NOT EXISTS service_build_watermarks (target TEXT NOT NULL, model TEXT NOT NULL, value TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (target, model))');
  legacy.prepare('INSERT INTO service_build_watermarks VALUES (?, ?, ?, ?)').run('DUCK', 'public.inc', "'2024-02-03'", '2025-01-01T00:00:00.000Z');
  legacy.close();
  const store = await openStateStore(file);
  try {
    assert.deepEqual(await store.getWatermark('DUCK', 'public.inc'), { value: "'2024-02-03'", updatedAt: '2025-01-01T00:00:00.000Z' });
    assert.equal((await store.createProject({ name: 'p' })).name, 'p');
  } finally {
    await store.close();
  }
});

test('a store from a newer release is refused', async () => {
  const file = join(dir, 'newer.db');
  await (await openStateStore(file)).close();
  const db = openDatabase(file);
  db.prepare("INSERT INTO schema_version VALUES (99, 'future', '2030-01-01T00:00:00.000Z')").run();
  db.close();
  await assert.rejects(openStateStore(file), /state store schema version 99 is newer than this service supports \(3\)/);
});

test('migration 3: a terminal execution stores its public JSON, an active one none; a row without it (stored before) is built when read', async () => {
  const file = join(dir, 'stored-json.db');
  const store = await openStateStore(file);
  try {
    const p = await store.createProject({ name: 'p' });
    const job = await store.createJob({
      project_id: p.id, name: 'j', type: 'query', file_name: 'j.sql', description: '', active: false, default: false,
      streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    });
    const base = { project_id: p.id, job_id: job.id, job_name: 'j', job_type: 'query' as const, file_name: 'j.sql', trigger: 'api' as const };
    const done = await store.createExecution({ ...base, status: 'success', start_time: '2025-01-01T00:00:00.000Z', end_time: '2025-01-01T00:00:02.500Z' });
    const queued = await store.createExecution({ ...base, start_time: '2025-01-01T00:00:03.000Z' });
    const page = async () => (await store.listExecutionsJson({ projectId: p.id, order: 'asc', limit: 10 })).toString();
    const expected = JSON.stringify((await store.listExecutions({ projectId: p.id, order: 'asc', limit: 10 })).map(publicExecution));
    assert.equal(await page(), expected);
    const db = openDatabase(file);
    try {
      const stored = (id: string) => (db.prepare('SELECT public_json FROM executions WHERE exec_id = ?').get(id) as { public_json: string | null }).public_json;
      assert.equal(stored(done.exec_id), JSON.stringify(publicExecution((await store.findExecution(done.exec_id))!)));
      assert.equal(stored(queued.exec_id), null);
      // As a row written before the migration: no stored text (the triggers do not fire on this column).
      db.prepare('UPDATE executions SET public_json = NULL WHERE exec_id = ?').run(done.exec_id);
      assert.equal(stored(done.exec_id), null);
      assert.equal(await page(), expected);
      // Ending an execution closes its open tasks; its text is stored again, once, with the closed map.
      const running = await store.createExecution({ ...base, job_id: 'other-job', start_time: '2025-01-01T00:00:04.000Z' });
      await store.upsertTasks([1, 2, 3].map((n) => ({ exec_id: running.exec_id, task_id: `task_${n}`, stream_name: `s${n}`, mode: 'm', status: 'running' as const })));
      assert.equal(stored(running.exec_id), null);
      await store.updateExecution(running.exec_id, { status: 'cancelled', end_time: '2025-01-01T00:00:05.000Z' });
      const cancelled = (await store.findExecution(running.exec_id))!;
      assert.equal(cancelled.status_map.cancelled, 3);
      assert.equal(stored(running.exec_id), JSON.stringify(publicExecution(cancelled)));
      // A task created after the end drops the stored text (the page builds it when read).
      await store.upsertTask({ exec_id: running.exec_id, task_id: 'task_9', stream_name: 'late', mode: 'm', status: 'queued' });
      assert.equal(stored(running.exec_id), null);
      assert.equal(await page(), JSON.stringify((await store.listExecutions({ projectId: p.id, order: 'asc', limit: 10 })).map(publicExecution)));
      // A stored text is what is served: proven by tampering with it.
      db.prepare("UPDATE executions SET public_json = '{\"x\":1}' WHERE exec_id = ?").run(done.exec_id);
      assert.equal(JSON.parse(await page())[0].x, 1);
    } finally {
      db.close();
    }
  } finally {
    await store.close();
  }
});

test('migration 3: the executions columns whose update recomputes the stored JSON are exactly those the JSON reads', async () => {
  const file = join(dir, 'json-sources.db');
  await (await openStateStore(file)).close();
  const db = openDatabase(file, { readonly: true });
  try {
    const columns = (db.prepare('SELECT name FROM pragma_table_info(?)').all('executions') as { name: string }[]).map((r) => r.name);
    const read = columns.filter((c) => c !== 'public_json' && new RegExp(`\\b${c}\\b`).test(PUBLIC_JSON));
    assert.deepEqual([...read].sort(), [...EXECUTION_JSON_SOURCES].sort());
  } finally {
    db.close();
  }
});

test('reader threads: each statement is prepared once per thread (its fill too, even when the first page needs none); a failing statement rejects with its error and the thread goes on; closed readers refuse', async () => {
  const file = join(dir, 'readers.db');
  const db = openDatabase(file);
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, j TEXT); INSERT INTO t VALUES (1, '{\"a\":1}'), (2, NULL), (3, '[3]')");
  db.close();
  const readers = new SqliteReaders(file, 2);
  try {
    const page = 'SELECT COALESCE(j, id) FROM t WHERE id <= ? ORDER BY id';
    const fill = "SELECT value, printf('{\"built\":%d}', value) FROM json_each(?)";
    const read = async (n: number) => (await readers.jsonArray(page, [n], fill)).toString();
    // Several rounds over both threads: the first pages need no fill, the later ones do.
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(await Promise.all([read(1), read(1)]), ['[{"a":1}]', '[{"a":1}]']);
      assert.deepEqual(await Promise.all([read(3), read(3)]), ['[{"a":1},{"built":2},[3]]', '[{"a":1},{"built":2},[3]]']);
    }
    await assert.rejects(readers.jsonArray('SELECT nope FROM t', [], fill), /no such column: nope/);
    assert.equal(await read(2), '[{"a":1},{"built":2}]');
    await assert.rejects(readers.jsonArray("INSERT INTO t VALUES (9, 'x') RETURNING j", [], fill), /readonly|query_only|attempt to write/i);
  } finally {
    await readers.close();
  }
  await assert.rejects(readers.jsonArray('SELECT 1', [], 'SELECT 1'), /closed/);
});
