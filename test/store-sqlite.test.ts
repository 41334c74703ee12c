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
  await assert.rejects(openStateStore(file), /state store schema version 99 is newer than this service supports \(2\)/);
});
