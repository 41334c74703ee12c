/**
 * The in-memory index behind `file/list`: after one walk,
 * lists are answered from memory (no directory walk), the daemon's own writes
 * are visible to the very next list, changes made behind its back arrive
 * through the watcher, and the index always agrees with a fresh walk.
 */
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ProjectTree } from '../engine/files/project-tree.js';
import { compareNames, treeIndex } from '../engine/files/tree-index.js';
import { tempDir } from './helpers/build-cli.js';
import { waitFor } from './helpers/within.js';

const names = (files: { name: string }[]) => files.map((f) => f.name);
/** A fresh walk: lists with bodies never use the index. */
const walked = async (tree: ProjectTree, prefix = '') => names(await tree.list({ prefix, includeBody: true }));

test('code-point order is UTF-8 byte order, also across surrogate pairs', () => {
  const words = ['b', 'a', 'ab', 'a/b', 'a.b', '\uffff', '\u{1f600}', 'é', 'z'];
  const bytes = [...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual([...words].sort(compareNames), bytes);
});

test('after one walk, lists of any prefix come from memory; own writes show at once', async () => {
  const root = tempDir('svc-index-');
  for (let d = 0; d < 20; d++) {
    mkdirSync(path.join(root, `dir${d}`));
    for (let f = 0; f < 25; f++) writeFileSync(path.join(root, `dir${d}`, `f${f}.txt`), `${d}/${f}`);
  }
  const tree = new ProjectTree(root);
  assert.equal((await tree.list()).length, 20 + 500);
  const index = treeIndex(root)!;
  assert.equal(index.stats.walks, 1);
  assert.deepEqual(names(await tree.list({ prefix: 'dir1/' })), (await walked(tree, 'dir1/')));
  assert.deepEqual(names(await tree.list({ prefix: 'dir19/f2' })), ['dir19/f2.txt', 'dir19/f20.txt', 'dir19/f21.txt', 'dir19/f22.txt', 'dir19/f23.txt', 'dir19/f24.txt']);
  assert.equal(index.stats.walks, 1, 'no further directory walk');

  await tree.save({ name: 'dir3/new.txt', body: 'n' });
  await tree.save({ name: 'fresh/deep/x.yaml', body: 'x: 1' });
  assert.ok(names(await tree.list({ prefix: 'dir3/' })).includes('dir3/new.txt'));
  assert.deepEqual(names(await tree.list({ prefix: 'fresh' })), ['fresh', 'fresh/deep', 'fresh/deep/x.yaml']);
  await tree.rename('fresh', 'moved');
  assert.deepEqual(names(await tree.list({ prefix: 'fresh' })), []);
  assert.deepEqual(names(await tree.list({ prefix: 'moved' })), ['moved', 'moved/deep', 'moved/deep/x.yaml']);
  await tree.delete('dir4');
  assert.deepEqual(names(await tree.list({ prefix: 'dir4' })), []);
  assert.equal(index.stats.walks, 1);
  assert.deepEqual(names(await tree.list()), await walked(tree));
});

test('changes behind the daemon\'s back arrive through the watcher; staging files and escapes never show', async () => {
  const root = tempDir('svc-index-ext-');
  const outside = tempDir('svc-index-out-');
  writeFileSync(path.join(outside, 'secret.txt'), 's');
  mkdirSync(path.join(root, 'a'));
  writeFileSync(path.join(root, 'a', '1.txt'), '1');
  const tree = new ProjectTree(root);
  assert.deepEqual(names(await tree.list()), ['a', 'a/1.txt']);

  writeFileSync(path.join(root, 'a', '2.txt'), '2');
  mkdirSync(path.join(root, 'b'));
  writeFileSync(path.join(root, 'b', '3.txt'), '3');
  writeFileSync(path.join(root, 'a', '.service-tmp-0123456789abcdef01234567'), 'staging');
  symlinkSync(outside, path.join(root, 'out'));
  mkdirSync(path.join(root, 'c'));
  symlinkSync('c', path.join(root, 'c-link'));
  const expected = ['a', 'a/1.txt', 'a/2.txt', 'b', 'b/3.txt', 'c', 'c-link'];
  await waitFor(async () => JSON.stringify(names(await tree.list())) === JSON.stringify(expected), 5000, 'external additions to be listed');
  assert.deepEqual(names(await tree.list()), await walked(tree));

  writeFileSync(path.join(root, 'c', 'in-c.txt'), 'c');
  renameSync(path.join(root, 'b'), path.join(root, 'b2'));
  rmSync(path.join(root, 'a'), { recursive: true });
  const after = ['b2', 'b2/3.txt', 'c', 'c-link', 'c/in-c.txt'];
  await waitFor(async () => JSON.stringify(names(await tree.list())) === JSON.stringify(after), 5000, 'external renames and deletes to be listed');
  assert.deepEqual(names(await tree.list()), await walked(tree), 'the index agrees with a fresh walk');
});
