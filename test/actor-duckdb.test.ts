/**
 * The DuckDB actor on a real DuckDB file: one actor (one instance, on its own
 * thread) per path, jobs strictly one at a time in FIFO order, interrupt and
 * abort stop work with a `cancelled` error, and the file survives close and
 * reopen.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { duckdbActor, duckdbKey, type DuckDbThread } from '../actors/duckdb-actor.js';
import type { DuckDbConnection } from '../engine/connections/connection.js';
import { EngineError } from '../engine/errors.js';
import { duckdbOpenCount } from '../engine/targets/duckdb/instance-cache.js';

const LONG_QUERY = 'select count(*) from range(1000000000) a, range(100) b';

describe('duckdb actor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'actor-duckdb-'));
  const file = join(dir, 'warehouse.duckdb');
  const conn: DuckDbConnection = { name: 'W', source: 'project', type: 'duckdb', path: file, schema: 'main' };
  /** A statement on the file's thread, through a session of the job. */
  const exec = (sql: string) => (thread: DuckDbThread) => thread.withSession(conn, (s) => s.exec(sql));
  const scalar = (sql: string) => (thread: DuckDbThread) => thread.withSession(conn, async (s) => (await s.query(sql)).rows[0]![0]);
  after(async () => {
    await duckdbActor(file).close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns the same actor for the same file, however the path is spelled', () => {
    const a = duckdbActor(file);
    const b = duckdbActor(relative(process.cwd(), file));
    const c = duckdbActor(join(dir, '.', 'sub', '..', 'warehouse.duckdb'));
    symlinkSync(dir, join(dir, 'link'));
    const d = duckdbActor(join(dir, 'link', 'warehouse.duckdb'));
    assert.equal(a, b);
    assert.equal(a, c);
    assert.equal(a, d, 'a symlinked directory names the same file');
    assert.ok(isAbsolute(a.path));
    assert.equal(a.path, duckdbKey(file));
    assert.notEqual(duckdbActor(join(dir, 'other.duckdb')), a);
    assert.equal(duckdbKey(':memory:'), ':memory:');
  });

  it('runs jobs one at a time in submission order', async () => {
    const actor = duckdbActor(file);
    const log: string[] = [];
    const job = (name: string, sql: string) =>
      actor.run(async (thread) => {
        log.push(`start ${name}`);
        await exec(sql)(thread);
        await delay(5); // give a concurrent job every chance to interleave
        log.push(`end ${name}`);
        return name;
      });
    const results = await Promise.all([
      job('a', 'create or replace table t as select range as i from range(200000)'),
      job('b', 'insert into t select range from range(10)'),
      job('c', 'select count(*) from t'),
    ]);
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    const count = await actor.run(scalar('select count(*)::integer from t'));
    assert.equal(count, 200010);
  });

  it('owns the file on a thread of its own: the instance is opened once there and never on this thread', async () => {
    const actor = duckdbActor(file);
    await Promise.all([actor.run(exec('create or replace table u as select 1 as x')), actor.run(scalar('select count(*)::integer from u'))]);
    const info = await actor.info();
    assert.notEqual(info.threadId, threadId, 'not the main thread');
    assert.equal(info.opens, 1);
    assert.equal(duckdbOpenCount(file), 0, 'this thread never opened the file');
  });

  it('interrupt() stops a long query with a cancelled error, and the next job runs', async () => {
    const actor = duckdbActor(file);
    const long = actor.run(exec(LONG_QUERY));
    const next = actor.run(scalar('select 42::integer'));
    await delay(100);
    assert.equal(actor.pending, 2);
    await actor.interrupt();
    await assert.rejects(long, (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.code, 'cancelled');
      assert.match(String((err.cause as Error | undefined)?.message ?? err.message), /interrupt|cancelled/i);
      return true;
    });
    assert.equal(await next, 42);
  });

  it('aborting a queued job drops it without running it; aborting the running one interrupts it', async () => {
    const actor = duckdbActor(file);
    const running = new AbortController();
    const queued = new AbortController();
    let queuedRan = false;
    const long = actor.run(exec(LONG_QUERY), { signal: running.signal });
    const dropped = actor.run(
      async () => {
        queuedRan = true;
      },
      { signal: queued.signal },
    );
    queued.abort();
    await assert.rejects(dropped, (err: unknown) => err instanceof EngineError && err.code === 'cancelled');
    await delay(50);
    running.abort();
    await assert.rejects(long, (err: unknown) => err instanceof EngineError && err.code === 'cancelled');
    assert.equal(queuedRan, false);
    assert.equal(actor.pending, 0);
  });

  it('close() lets queued work finish, frees the path, and the data is on disk', async () => {
    const actor = duckdbActor(file);
    const write = actor.run(exec('create or replace table kept as select 7 as v'));
    const closing = actor.close();
    await assert.rejects(actor.run(async () => 1), /actor is closed/);
    await write;
    await closing;
    const reopened = duckdbActor(file);
    assert.notEqual(reopened, actor);
    const v = await reopened.run(scalar('select v::integer from kept'));
    assert.equal(v, 7);
  });

  it('reports a file that cannot be opened as a connection error', async () => {
    const actor = duckdbActor(join(dir, 'missing-dir', 'x.duckdb'));
    await assert.rejects(actor.run(async () => 1), (err: unknown) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.code, 'connection');
      assert.match(err.message, /^could not open duckdb database .*x\.duckdb$/);
      return true;
    });
    await actor.close();
  });
});
