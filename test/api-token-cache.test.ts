// Token lookups are cached by the store over SQLite (engine/state/sql-store.ts,
// projectIdForToken) while nothing can have changed the tokens table. On the
// real store over real HTTP: a token revoked by another connection to the
// state file (an operator deleting its row) is refused by the next request,
// a token added by another connection or by the store works at once, and an
// unknown token is never remembered as valid.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sha256hex } from '../engine/state/ids.js';
import { openDatabase } from '../engine/state/sqlite-database.js';
import { openSqliteStore } from '../engine/state/sqlite-store.js';
import { startApiServer, type ApiServer } from './helpers/api-server.js';

let a: ApiServer;

before(async () => {
  a = await startApiServer();
});

after(async () => {
  await a?.close();
});

const status = async (token: string) => (await a.request('GET', '/project/get', { token })).status;

/** Another connection to the state file, as an operator's sqlite3 session. */
function operator<T>(fn: (db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(`${a.base}/state.db`);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

test('a token revoked by another connection is refused by the next request; the project keeps its other tokens', async () => {
  const second = randomUUID();
  await a.store.addToken(a.acme.id, sha256hex(second));
  assert.equal(await status(a.acme.token), 200);
  assert.equal(await status(second), 200);
  assert.equal(await status(a.acme.token), 200, 'answered from the cache');
  const deleted = operator((db) => db.prepare('DELETE FROM tokens WHERE digest = ?').run(sha256hex(second)).changes);
  assert.equal(deleted, 1);
  assert.equal(await status(second), 401);
  assert.equal(await status(a.acme.token), 200);
});

test('a token added by another connection, or by the store, works at once; an unknown one is refused each time', async () => {
  const unknown = randomUUID();
  assert.equal(await status(unknown), 401);
  operator((db) => db.prepare('INSERT INTO tokens (digest, project_id, label, created) VALUES (?, ?, ?, ?)').run(sha256hex(unknown), a.beta.id, '', new Date().toISOString()));
  assert.equal(await status(unknown), 200);
  assert.equal((await a.request('GET', '/project/get', { token: unknown })).body.name, 'beta');
  const added = randomUUID();
  assert.equal(await status(added), 401);
  await a.store.addToken(a.acme.id, sha256hex(added));
  assert.equal(await status(added), 200);
});

test('the store: a cached token stays valid within a turn of the event loop and is dropped by the next one after a revoke', async () => {
  const token = randomUUID();
  const digest = sha256hex(token);
  await a.store.addToken(a.beta.id, digest);
  assert.equal(await a.store.projectIdForToken(digest), a.beta.id);
  const other = openSqliteStore(`${a.base}/state.db`);
  try {
    operator((db) => db.prepare('DELETE FROM tokens WHERE digest = ?').run(digest));
    await new Promise((r) => setImmediate(r));
    assert.equal(await a.store.projectIdForToken(digest), undefined);
    assert.equal(await other.projectIdForToken(digest), undefined);
  } finally {
    await other.close();
  }
});
