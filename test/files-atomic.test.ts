// Atomic writes and the per-project lock. A real crash is
// hard to stage, so these check the observable half: concurrent readers never
// see a partial or mixed file, no temporaries are left behind, and writes of
// one project are serialised in arrival order while other projects proceed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../engine/errors.js';
import { ProjectTree } from '../engine/files/project-tree.js';
import { isTempName, syncDirectory, writeFileAtomic } from '../engine/files/atomic-write.js';

const bases: string[] = [];

after(async () => {
  await Promise.all(bases.map((b) => rm(b, { recursive: true, force: true })));
});

async function freshRoot(): Promise<string> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'files-atomic-'));
  bases.push(base);
  return path.join(base, 'root');
}

/** Every entry under `dir`, recursively, relative names. */
async function allEntries(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const SIZE = 1 << 20;
const version = (i: number): string => String.fromCharCode(65 + (i % 26)).repeat(SIZE - 8) + `#${String(i).padStart(6, '0')}\n`;

function assertWhole(body: string, what: string): void {
  assert.equal(body.length, SIZE, `${what}: partial read of ${body.length} chars`);
  const i = Number(body.slice(-7, -1));
  assert.ok(Number.isInteger(i), `${what}: no version trailer`);
  assert.ok(body === version(i), `${what}: mixed content for version ${i}`);
}

test('a concurrent reader never sees a partial file while 50 large saves run', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'big/data.txt', body: version(0) });
  let done = false;
  let reads = 0;
  const seen = new Set<number>();
  const reader = (async () => {
    while (!done) {
      const viaTree = await tree.get('big/data.txt');
      assertWhole(viaTree.body!, 'get');
      assert.equal(viaTree.size, SIZE);
      const raw = await readFile(path.join(root, 'big', 'data.txt'), 'utf8');
      assertWhole(raw, 'readFile');
      seen.add(Number(raw.slice(-7, -1)));
      const listed = await tree.list({ prefix: 'big/', includeBody: true });
      assert.deepEqual(listed.map((f) => f.name), ['big/data.txt']);
      assertWhole(listed[0]!.body!, 'list');
      reads += 3;
    }
  })();
  // Requested a millisecond apart, so renames land while the reader runs: started all at once, the
  // 50 writes (done before each save's turn since the lock only covers the rename) fill libuv's
  // threadpool, the reader's own reads wait behind them, and the renames all land in one burst.
  const saves: Promise<unknown>[] = [];
  for (let k = 0; k < 50; k++) {
    saves.push(tree.save({ name: 'big/data.txt', body: version(k + 1) }));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(saves);
  done = true;
  await reader;
  assert.ok(reads >= 3, 'the reader ran');
  assert.ok(seen.size >= 2, `the reader overlapped the saves (saw ${seen.size} versions)`);
  // The lock keeps arrival order: the last save requested is the last written.
  assertWhole(await tree.readText('big/data.txt'), 'final');
  assert.equal((await tree.get('big/data.txt')).body, version(50));
  assert.deepEqual(await allEntries(root), ['big', 'big/data.txt']);
});

test('no temporary files are left after successful and failed saves', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/a.txt', body: 'a' });
  await tree.save({ name: 'd/a.txt', body: 'b' });
  await tree.save({ name: 'd/sub', is_dir: true });
  await assert.rejects(tree.save({ name: 'd/sub', body: 'x' }), (e: unknown) => e instanceof EngineError && e.code === 'conflict');
  await assert.rejects(tree.save({ name: 'd/a.txt/x', body: 'x' }), (e: unknown) => e instanceof EngineError && e.code === 'conflict');
  await assert.rejects(tree.save({ name: 'd/b.bin', body: '%%', encoding: 'base64' }), (e: unknown) => e instanceof EngineError && e.code === 'bad_request');
  assert.deepEqual(await allEntries(root), ['d', 'd/a.txt', 'd/sub']);
});

test('writeFileAtomic removes its temporary when the rename fails', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'dir/inner.txt', body: 'x' });
  // Renaming a file over a non-empty directory fails after the temp file is written.
  await assert.rejects(writeFileAtomic(path.join(root, 'dir'), Buffer.from('data')));
  assert.deepEqual(await allEntries(root), ['dir', 'dir/inner.txt']);
});

test('temporary names have a fixed length and are recognised', () => {
  assert.equal(isTempName('.service-tmp-0123456789abcdef01234567'), true);
  assert.equal(isTempName('.service-tmp-notes'), false);
  assert.equal(isTempName('service-tmp-0123456789abcdef01234567'), false);
});

test('a save of a 255-byte base name works (the temporary name does not grow with it)', async () => {
  const tree = new ProjectTree(await freshRoot());
  const name = `d/${'n'.repeat(255)}`;
  await tree.save({ name, body: 'x' });
  assert.equal(await tree.readText(name), 'x');
});

test('withLock: holders do not interleave and run in arrival order', async () => {
  const tree = new ProjectTree(await freshRoot());
  const log: string[] = [];
  const holder = (id: number) => tree.withLock(async () => {
    log.push(`enter ${id}`);
    for (let i = 0; i < 5; i++) await tick();
    log.push(`exit ${id}`);
    return id;
  });
  const results = await Promise.all([holder(1), holder(2), holder(3)]);
  assert.deepEqual(results, [1, 2, 3]);
  assert.deepEqual(log, ['enter 1', 'exit 1', 'enter 2', 'exit 2', 'enter 3', 'exit 3']);
});

test('withLock: a failing holder releases the lock', async () => {
  const tree = new ProjectTree(await freshRoot());
  await assert.rejects(tree.withLock(async () => {
    throw new Error('boom');
  }), /boom/);
  assert.equal(await tree.withLock(() => 'next'), 'next');
});

test('a save waits while another caller holds the lock (check-then-write is safe)', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding!: () => void;
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const holder = tree.withLock(async () => {
    holding();
    assert.equal(await tree.exists('f.txt'), false);
    await gate;
    assert.equal(await tree.exists('f.txt'), false, 'the save must not land while the lock is held');
  });
  await held;
  const save = tree.save({ name: 'f.txt', body: 'x' });
  for (let i = 0; i < 20; i++) await tick();
  assert.equal(await tree.exists('f.txt'), false);
  release();
  await holder;
  await save;
  assert.equal(await tree.readText('f.txt'), 'x');
});

test('tree operations inside withLock do not deadlock (the lock is re-entrant)', async () => {
  const tree = new ProjectTree(await freshRoot());
  const result = await tree.withLock(async () => {
    await tree.save({ name: 'a.txt', body: 'a' });
    await tree.rename('a.txt', 'b.txt');
    await tree.withLock(() => tree.save({ name: 'c.txt', body: 'c' }));
    await tree.delete('c.txt');
    return (await tree.list()).map((f) => f.name);
  });
  assert.deepEqual(result, ['b.txt']);
});

test('trees on the same root share one lock; other projects are not blocked', async () => {
  const rootA = await freshRoot();
  const a1 = new ProjectTree(rootA);
  const a2 = new ProjectTree(`${rootA}/`);
  const b = new ProjectTree(await freshRoot());
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = a1.withLock(() => gate);
  let aSaved = false;
  const saveA = a2.save({ name: 'x.txt', body: 'a' }).then(() => {
    aSaved = true;
  });
  await b.save({ name: 'x.txt', body: 'b' });
  assert.equal(await b.readText('x.txt'), 'b');
  for (let i = 0; i < 10; i++) await tick();
  assert.equal(aSaved, false);
  release();
  await holder;
  await saveA;
  assert.equal(aSaved, true);
});

test('two concurrent renames of one file: exactly one wins, the other gets 404', async () => {
  const tree = new ProjectTree(await freshRoot());
  for (let round = 0; round < 20; round++) {
    await tree.save({ name: `r${round}/a.txt`, body: String(round) });
    const results = await Promise.allSettled([
      tree.rename(`r${round}/a.txt`, `r${round}/b.txt`),
      tree.rename(`r${round}/a.txt`, `r${round}/c.txt`),
    ]);
    assert.equal(results[0]!.status, 'fulfilled', 'the first arrival wins');
    assert.equal(results[1]!.status, 'rejected');
    const err = (results[1] as PromiseRejectedResult).reason as EngineError;
    assert.equal(err.code, 'not_found');
    assert.equal(err.message, `file "r${round}/a.txt" not found`);
    assert.deepEqual((await tree.list({ prefix: `r${round}/` })).map((f) => f.name), [`r${round}/b.txt`]);
  }
});

test('concurrent renames onto one target: one wins, the other gets 409', async () => {
  const tree = new ProjectTree(await freshRoot());
  await tree.save({ name: 'x.txt', body: 'x' });
  await tree.save({ name: 'y.txt', body: 'y' });
  const results = await Promise.allSettled([tree.rename('x.txt', 'z.txt'), tree.rename('y.txt', 'z.txt')]);
  assert.equal(results[0]!.status, 'fulfilled');
  assert.equal(results[1]!.status, 'rejected');
  assert.equal(((results[1] as PromiseRejectedResult).reason as EngineError).message, 'file "z.txt" already exists');
  assert.equal(await tree.readText('z.txt'), 'x');
  assert.equal(await tree.readText('y.txt'), 'y');
});

test('a delete racing saves into the same directory never leaves a half state', async () => {
  const tree = new ProjectTree(await freshRoot());
  await tree.save({ name: 'd/0.txt', body: '0' });
  const ops: Promise<unknown>[] = [];
  for (let i = 1; i <= 10; i++) ops.push(tree.save({ name: `d/${i}.txt`, body: String(i) }));
  ops.push(tree.delete('d'));
  for (let i = 11; i <= 15; i++) ops.push(tree.save({ name: `d/${i}.txt`, body: String(i) }));
  const results = await Promise.allSettled(ops);
  assert.ok(results.every((r) => r.status === 'fulfilled'));
  assert.deepEqual((results[10] as PromiseFulfilledResult<string[]>).value.length, 11);
  assert.deepEqual((await tree.list()).map((f) => f.name), ['d', 'd/11.txt', 'd/12.txt', 'd/13.txt', 'd/14.txt', 'd/15.txt']);
});

/** Resolves once `dir` holds a temporary file (a save staged its content), polling. */
async function stagedTemp(dir: string): Promise<string> {
  for (let i = 0; i < 2000; i++) {
    const temp = (await readdir(dir).catch(() => [] as string[])).find(isTempName);
    if (temp !== undefined) return temp;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`no temporary file appeared in ${dir}`);
}

test('a save waiting for the lock has its content written beside the target already, hidden from listings', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/a.txt', body: 'old' });
  const lock = await holdLock(tree);
  const saving = tree.save({ name: 'd/a.txt', body: 'new' });
  await stagedTemp(path.join(root, 'd'));
  assert.equal(await tree.readText('d/a.txt'), 'old', 'not renamed before its turn');
  assert.deepEqual((await tree.list()).map((f) => f.name), ['d', 'd/a.txt']);
  await lock.release();
  assert.equal((await saving).size, 3);
  assert.equal(await tree.readText('d/a.txt'), 'new');
  assert.deepEqual(await allEntries(root), ['d', 'd/a.txt']);
});

/** Holds the project lock until `release` is called; `inside(fn)` runs fn as the holder (re-entrant). */
async function holdLock(tree: ProjectTree) {
  let release!: () => void;
  let entered!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const work: (() => Promise<unknown>)[] = [];
  const holder = tree.withLock(async () => {
    entered();
    await released;
    for (const fn of work) await fn();
  });
  await inside;
  return { release: () => (release(), holder), queue: (fn: () => Promise<unknown>) => work.push(fn) };
}

test('a directory deleted while a save into it waits for the lock: the delete succeeds, the save recreates its file', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/other.txt', body: 'x' });
  const lock = await holdLock(tree);
  const saving = tree.save({ name: 'd/a.txt', body: 'after the delete' }); // waits for the lock
  await stagedTemp(path.join(root, 'd'));
  let removed: string[] = [];
  lock.queue(async () => (removed = await tree.delete('d'))); // the holder deletes first
  await lock.release();
  assert.deepEqual(removed, ['d/other.txt']);
  assert.equal((await saving).size, 16);
  assert.equal(await tree.readText('d/a.txt'), 'after the delete');
  assert.deepEqual(await allEntries(root), ['d', 'd/a.txt']);
});

test('a directory renamed while a save into it waits for the lock: the save writes at its own name', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/other.txt', body: 'x' });
  const lock = await holdLock(tree);
  const saving = tree.save({ name: 'd/a.txt', body: 'y' });
  await stagedTemp(path.join(root, 'd'));
  lock.queue(() => tree.rename('d', 'e'));
  await lock.release();
  await saving;
  assert.equal(await tree.readText('d/a.txt'), 'y');
  assert.deepEqual((await tree.list()).map((f) => f.name), ['d', 'd/a.txt', 'e', 'e/other.txt']);
});

test('files appearing in a directory while a delete empties it do not fail the delete', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  for (let i = 0; i < 200; i++) await tree.save({ name: `d/f${i}.txt`, body: 'x' });
  // Files keep landing in d (as staged temporaries of concurrent saves do) while the delete runs.
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) await writeFile(path.join(root, 'd', `.service-tmp-${String(i).padStart(24, '0')}`), 'x').catch(() => {});
  })();
  try {
    assert.equal((await tree.delete('d')).length, 200);
  } finally {
    writing = false;
    await writer;
  }
  assert.deepEqual(await allEntries(root), []);
});

test('syncDirectory: concurrent callers all complete; each waits for a sync that started after its call', async () => {
  const root = await freshRoot();
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/a.txt', body: 'x' });
  const dir = path.join(root, 'd');
  const first = syncDirectory(dir);
  const joined = Array.from({ length: 20 }, () => syncDirectory(dir));
  // Callers arriving while one sync is pending share it.
  assert.equal(new Set(joined).size, 1);
  await Promise.all([first, ...joined]);
  await syncDirectory(path.join(root, 'missing')); // best effort: no error for what cannot be synced
});
