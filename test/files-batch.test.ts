// Plain-file saves sharing a turn of the project lock:
// ProjectLock.join groups only callers queued back to back, a group's items
// are handled in arrival order, ProjectTree.commitBatch settles each item on
// its own (renames on the file writer thread), and saveFile through the job layer
// keeps arrival order against deletes and job side effects.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../engine/errors.js';
import { isTempName, stageFile } from '../engine/files/atomic-write.js';
import { stageInThread } from '../engine/files/file-writer.js';
import { projectLock, ProjectLock, type GroupRunner } from '../engine/files/project-lock.js';
import { ProjectTree, type BatchSave } from '../engine/files/project-tree.js';
import { deleteFile, saveFile } from '../engine/daemon-projects/file-service.js';
import type { ProjectScope } from '../engine/daemon-projects/project-scope.js';
import type { ConnectionRegistry } from '../engine/connections/index.js';
import { openSqliteStore } from '../engine/state/sqlite-store.js';
import type { StateStore } from '../engine/state/store.js';

const bases: string[] = [];
const stores: StateStore[] = [];

after(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await Promise.all(bases.map((b) => rm(b, { recursive: true, force: true })));
});

async function freshBase(): Promise<string> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'files-batch-'));
  bases.push(base);
  return base;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    if (cond()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Holds `lock` until `release()`; resolves once held. */
async function hold(lock: ProjectLock) {
  let release!: () => void;
  let entered!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const holder = lock.run(async () => {
    entered();
    await released;
  });
  await inside;
  return () => (release(), holder);
}

async function temporaries(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).filter((n) => isTempName(path.basename(n)));
}

// ---- ProjectLock.join ----

test('join: callers queued back to back share one turn, in arrival order; anything queued between them splits the group', async () => {
  const lock = new ProjectLock();
  const log: string[] = [];
  const runner: GroupRunner<string, string> = async (items) => {
    log.push(`group ${items.join(',')}`);
    await tick();
    return items.map((i) => ({ status: 'fulfilled', value: i.toUpperCase() }));
  };
  const release = await hold(lock);
  const a = lock.join(runner, 'a');
  const b = lock.join(runner, 'b');
  const x = lock.run(() => void log.push('run x'));
  const c = lock.join(runner, 'c');
  const d = lock.join(runner, 'd');
  assert.equal(lock.queued, 6, 'the holder, x and four members');
  await release();
  assert.deepEqual(await Promise.all([a, b, x, c, d]), ['A', 'B', undefined, 'C', 'D']);
  assert.deepEqual(log, ['group a,b', 'run x', 'group c,d']);
  assert.equal(lock.queued, 0);
});

test('join: a group that started is closed; later callers form the next group', async () => {
  const lock = new ProjectLock();
  const groups: string[][] = [];
  let late: Promise<string> | undefined;
  const runner: GroupRunner<string, string> = async (items) => {
    groups.push([...items]);
    if (items.includes('a')) late = lock.join(runner, 'late'); // arrives while this group runs
    await tick();
    return items.map((value) => ({ status: 'fulfilled', value }));
  };
  await lock.join(runner, 'a');
  assert.equal(await late, 'late');
  assert.deepEqual(groups, [['a'], ['late']]);
});

test('join: each item settles on its own; a runner that throws rejects its members and releases the lock', async () => {
  const lock = new ProjectLock();
  const runner: GroupRunner<number, number> = async (items) =>
    items.map((i) => (i === 2 ? { status: 'rejected', reason: new Error(`item ${i}`) } : { status: 'fulfilled', value: i * 10 }));
  const release = await hold(lock);
  const results = await (async () => {
    const ps = [1, 2, 3].map((i) => lock.join(runner, i));
    await release();
    return Promise.allSettled(ps);
  })();
  assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), [10, 'item 2', 30]);

  const broken: GroupRunner<number, number> = async () => {
    throw new Error('runner failed');
  };
  const release2 = await hold(lock);
  const failing = [lock.join(broken, 1), lock.join(broken, 2)];
  await release2();
  for (const p of failing) await assert.rejects(p, /runner failed/);
  assert.equal(await lock.run(() => 'free'), 'free');
  assert.equal(lock.queued, 0);
});

test('join: a caller already holding the lock runs its item alone, at once', async () => {
  const lock = new ProjectLock();
  const groups: number[][] = [];
  const runner: GroupRunner<number, number> = async (items) => {
    groups.push([...items]);
    return items.map((value) => ({ status: 'fulfilled', value }));
  };
  assert.equal(await lock.run(() => lock.join(runner, 7)), 7);
  assert.deepEqual(groups, [[7]]);
});

// ---- stageInThread ----

test('stageInThread: the stages of one turn are written together, each settles on its own (a missing directory fails alone)', async () => {
  const root = path.join(await freshBase(), 'root');
  await mkdir(path.join(root, 'd'), { recursive: true });
  const names = ['d/a.txt', 'nowhere/b.txt', 'd/a.txt', 'd/c.bin'];
  const bodies = [Buffer.from('first'), Buffer.from('lost'), Buffer.from('second'), Buffer.from([0, 255, 1])];
  const results = await Promise.allSettled(names.map((n, i) => stageInThread(path.join(root, n), bodies[i]!)));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  const failure = (results[1] as PromiseRejectedResult).reason as NodeJS.ErrnoException;
  assert.equal(failure.code, 'ENOENT');
  assert.match(failure.message, /nowhere/);
  for (const i of [0, 2, 3]) {
    const staged = (results[i] as PromiseFulfilledResult<Awaited<ReturnType<typeof stageInThread>>>).value;
    assert.equal(staged.target, path.join(root, names[i]!));
    assert.equal(path.dirname(staged.temp), path.dirname(staged.target));
    assert.ok(isTempName(path.basename(staged.temp)));
    assert.deepEqual(await readFile(staged.temp), bodies[i]);
    assert.equal(staged.stats.size, bodies[i]!.length);
  }
  assert.equal((await temporaries(root)).length, 3, 'the failed stage left no temporary');
});

// ---- ProjectTree.commitBatch ----

async function batchOf(tree: ProjectTree, files: readonly [string, string][]): Promise<BatchSave[]> {
  return Promise.all(
    files.map(async ([name, body]) => {
      const abs = tree.resolve(name);
      const data = Buffer.from(body);
      return { name, abs, data, staged: await stageFile(abs, data).catch(() => null) };
    }),
  );
}

test('commitBatch: in order (the last of one name wins), per-item conflicts leave the others alone, temporaries of failures removed', async () => {
  const root = path.join(await freshBase(), 'root');
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/keep.txt', body: 'k' });
  await mkdir(path.join(root, 'd', 'sub'));
  const items = await batchOf(tree, [
    ['d/a.txt', 'first'],
    ['d/sub', 'over a directory'],
    ['d/b.txt', 'b'],
    ['d/a.txt', 'second'],
  ]);
  const results = await tree.withLock(() => tree.commitBatch(items));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  const err = (results[1] as PromiseRejectedResult).reason as EngineError;
  assert.equal(err.code, 'conflict');
  assert.match(err.message, /"d\/sub" is a directory/);
  assert.equal(await tree.readText('d/a.txt'), 'second');
  assert.equal(await tree.readText('d/b.txt'), 'b');
  assert.equal((results[3] as PromiseFulfilledResult<{ size: number }>).value.size, 6);
  assert.ok((await stat(path.join(root, 'd', 'sub'))).isDirectory());
  assert.deepEqual(await temporaries(root), []);
});

test('commitBatch: a vanished temporary or nothing staged is written afresh in its place in the order', async () => {
  const root = path.join(await freshBase(), 'root');
  const tree = new ProjectTree(root);
  await tree.save({ name: 'd/x.txt', body: 'old' });
  const items = await batchOf(tree, [
    ['d/x.txt', 'one'],
    ['d/y.txt', 'y'],
    ['d/x.txt', 'three'],
    ['new/z.txt', 'z'], // its directory does not exist: nothing staged
    ['d/x.txt', 'five'],
  ]);
  assert.equal(items[3]!.staged, null);
  await rm(items[0]!.staged!.temp); // as if a delete had taken it
  const results = await tree.withLock(() => tree.commitBatch(items));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  assert.equal(await tree.readText('d/x.txt'), 'five');
  assert.equal(await tree.readText('d/y.txt'), 'y');
  assert.equal(await tree.readText('new/z.txt'), 'z');
  assert.deepEqual(await temporaries(root), []);

  // The vanished one, last of its name: written afresh, after the ones before it.
  const again = await batchOf(tree, [['d/x.txt', 'six'], ['d/x.txt', 'seven']]);
  await rm(again[1]!.staged!.temp);
  await tree.withLock(() => tree.commitBatch(again));
  assert.equal(await tree.readText('d/x.txt'), 'seven');
  assert.deepEqual(await temporaries(root), []);
});

test('commitBatch: a file in the parent chain is a conflict for that item only', async () => {
  const root = path.join(await freshBase(), 'root');
  const tree = new ProjectTree(root);
  await tree.save({ name: 'f', body: 'a file' });
  const items = await batchOf(tree, [['a.txt', 'a'], ['f/inside.txt', 'x'], ['b.txt', 'b']]);
  const results = await tree.withLock(() => tree.commitBatch(items));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal(((results[1] as PromiseRejectedResult).reason as EngineError).code, 'conflict');
  assert.equal(await tree.readText('b.txt'), 'b');
});

test('commitBatch: keeps the permission bits of the file it replaces', async () => {
  const root = path.join(await freshBase(), 'root');
  const tree = new ProjectTree(root);
  await tree.save({ name: 'run.sh', body: '#!/bin/sh\n' });
  const { chmod } = await import('node:fs/promises');
  await chmod(path.join(root, 'run.sh'), 0o750);
  await tree.withLock(async () => tree.commitBatch(await batchOf(tree, [['run.sh', '#!/bin/sh\necho\n']])));
  assert.equal((await stat(path.join(root, 'run.sh'))).mode & 0o777, 0o750);
});

test('commitBatch: refused without the project lock', async () => {
  const tree = new ProjectTree(path.join(await freshBase(), 'root'));
  await assert.rejects(tree.commitBatch([]), /without the project lock/);
});

// ---- saveFile (job layer) ----

async function scope(): Promise<ProjectScope> {
  const base = await freshBase();
  const store = openSqliteStore(path.join(base, 'state.db'));
  stores.push(store);
  await store.createProject({ name: 'p1', id: 'p1' });
  const noConnections = (): ConnectionRegistry => {
    throw new Error('no connection lookups expected');
  };
  return { projectId: 'p1', tree: new ProjectTree(path.join(base, 'files')), store, connections: noConnections, now: () => new Date() };
}

test('saveFile: 60 concurrent plain saves all land, the last requested of each name wins, no temporaries left', async () => {
  const p = await scope();
  await p.tree.save({ name: 'load/seed.txt', body: '' });
  const lock = projectLock(p.tree.root);
  const release = await hold(lock);
  // A save queues for the lock once its content is staged: each is let queue before the next starts,
  // so arrival order is request order.
  const saves: Promise<unknown>[] = [];
  for (let i = 0; i < 60; i++) {
    saves.push(saveFile(p, { name: `load/f${i % 20}.txt`, body: `v${i}` }));
    await until(`save ${i} queued`, () => lock.queued === i + 2);
  }
  await release();
  const results = await Promise.all(saves);
  assert.equal(results.length, 60);
  for (let f = 0; f < 20; f++) assert.equal(await p.tree.readText(`load/f${f}.txt`), `v${40 + f}`);
  assert.deepEqual(await temporaries(p.tree.root), []);
});

test('saveFile: a delete queued between saves runs between them (the saves before it are deleted, those after recreate the directory)', async () => {
  const p = await scope();
  await p.tree.save({ name: 'd/old.txt', body: 'o' });
  const lock = projectLock(p.tree.root);
  const release = await hold(lock);
  const before = [saveFile(p, { name: 'd/a.txt', body: 'a' }), saveFile(p, { name: 'd/b.txt', body: 'b' })]; // distinct names: their order does not matter
  await until('the saves before the delete queued', () => lock.queued === 3);
  const deleted = deleteFile(p, 'd');
  await until('the delete queued', () => lock.queued === 4);
  const afterDelete = [saveFile(p, { name: 'd/c.txt', body: 'c' }), saveFile(p, { name: 'd/a.txt', body: 'a2' })]; // distinct names
  await until('the saves after the delete queued', () => lock.queued === 6);
  await release();
  await Promise.all(before);
  assert.deepEqual((await deleted).deleted_job_ids, []);
  await Promise.all(afterDelete);
  assert.deepEqual((await p.tree.list()).map((f) => f.name), ['d', 'd/a.txt', 'd/c.txt']);
  assert.equal(await p.tree.readText('d/a.txt'), 'a2');
  assert.deepEqual(await temporaries(p.tree.root), []);
});

test('saveFile: one save refused in a group (a directory in the way) fails alone', async () => {
  const p = await scope();
  await p.tree.save({ name: 'x/dir', is_dir: true });
  const release = await hold(projectLock(p.tree.root));
  const saves = [saveFile(p, { name: 'x/a.txt', body: 'a' }), saveFile(p, { name: 'x/dir', body: 'no' }), saveFile(p, { name: 'x/b.txt', body: 'b' })];
  await until('queued', () => projectLock(p.tree.root).queued === 4);
  await release();
  const results = await Promise.allSettled(saves);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal(((results[1] as PromiseRejectedResult).reason as EngineError).code, 'conflict');
  assert.equal(await p.tree.readText('x/b.txt'), 'b');
  assert.deepEqual(await temporaries(p.tree.root), []);
});

test('saveFile: a plain file a default job points at, saved in a group, loses the job in order with the others', async () => {
  const p = await scope();
  await p.tree.save({ name: 'odd.txt', body: 'was a job file once' });
  const job = await p.store.createJob({
    project_id: p.projectId, name: 'odd', type: 'query', file_name: 'odd.txt', description: '', active: false, default: true,
    streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
  });
  const release = await hold(projectLock(p.tree.root));
  const saves = [saveFile(p, { name: 'a.txt', body: 'a' }), saveFile(p, { name: 'odd.txt', body: 'plain now' }), saveFile(p, { name: 'b.txt', body: 'b' })];
  await until('queued', () => projectLock(p.tree.root).queued === 4);
  await release();
  const results = await Promise.all(saves);
  assert.deepEqual(results.map((r) => r.file.name), ['a.txt', 'odd.txt', 'b.txt']);
  assert.equal(await p.tree.readText('odd.txt'), 'plain now');
  assert.deepEqual(await p.store.jobsByFile(p.projectId, 'odd.txt'), []);
  assert.ok(job.id);
});
