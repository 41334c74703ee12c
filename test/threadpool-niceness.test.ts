// reniceThreadpool (the daemon's start): every libuv threadpool thread of
// the process gets the nice value, the main thread keeps its own, and the
// threads DuckDB starts from a pool thread afterwards inherit the value.
// Linux only (elsewhere a thread has no nice value of its own). This test
// file runs in a process of its own, whose priorities it may lower.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { reniceThreadpool } from '../actors/threadpool-niceness.js';

const linux = process.platform === 'linux';

/** Thread ids of this process and each one's nice value (field 19 of /proc/…/stat). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

test('every libuv threadpool thread gets the nice value; the main thread keeps its own; DuckDB\'s threads inherit it', { skip: !linux && 'Linux only' }, async () => {
  const mainBefore = getPriority(process.pid);
  const niceness = Math.min(19, mainBefore + 5);
  const result = await reniceThreadpool(niceness);
  assert.equal(result.expected, Number(process.env.UV_THREADPOOL_SIZE ?? 4), 'libuv\'s pool size');
  assert.equal(result.reniced, result.expected, 'every pool thread answered and was reniced');

  // Whichever pool thread serves a call now answers with the new value.
  const served = new Set<number>();
  for (let i = 0; i < 50; i++) {
    for (const link of await Promise.all(Array.from({ length: 16 }, () => readlink('/proc/thread-self')))) served.add(Number(link.slice(link.lastIndexOf('/') + 1)));
  }
  const nice = niceByThread();
  assert.ok(served.size > 0 && !served.has(process.pid));
  for (const tid of served) assert.equal(nice.get(tid), niceness, `pool thread ${tid}`);
  assert.equal(getPriority(process.pid), mainBefore, 'the main thread is untouched');

  // DuckDB opens on a pool thread and starts its own threads there.
  const before = new Set(niceByThread().keys());
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await instance.connect();
  try {
    await conn.run('select count(*) from range(10000000)');
    const started = [...niceByThread()].filter(([tid]) => !before.has(tid));
    assert.ok(started.length > 0, 'DuckDB started a thread of its own');
    for (const [tid, value] of started) assert.equal(value, niceness, `DuckDB thread ${tid}`);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
});
