// The pieces of a pull that need no remote: the reconcile plan
// as a pure function, git blob ids computed locally (checked against `git
// hash-object`), credentials taken out of URLs and env files and stripped
// from messages, and the all-or-nothing tree transaction — including a
// crash half-way through an apply, rolled back by the next pull.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProjectTree } from '../engine/files/project-tree.js';
import { gitRemote, stripCredentials } from '../engine/git/git-credentials.js';
import type { TreeEntry } from '../engine/git/git-mirror.js';
import { blobOid } from '../engine/git/local-files.js';
import { planPull, type LocalState } from '../engine/git/pull-plan.js';
import { recoverInterruptedPull, TreeTransaction } from '../engine/git/tree-transaction.js';
import { git, treeSnapshot } from './helpers/git-remote.js';

const oid = (text: string) => blobOid(Buffer.from(text), 40);
const file = (p: string, text: string, mode = '100644'): TreeEntry => ({ path: p, mode, oid: oid(text) });
const local = (states: Record<string, LocalState>) => (name: string): LocalState => states[name] ?? { kind: 'missing' };

test('blob ids match git hash-object for text and binary content', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-oid-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, content] of [['a.txt', Buffer.from('hello\n')], ['empty', Buffer.alloc(0)], ['bin', Buffer.from([0, 255, 10, 13, 0])]] as const) {
    await writeFile(path.join(dir, name), content);
    assert.equal(blobOid(content, 40), (await git(dir, 'hash-object', name)).trim(), name);
  }
});

test('plan: missing → created, different → updated, same → nothing; sorted by name in byte order', () => {
  const remote = [file('b.txt', 'B'), file('a.txt', 'A2'), file('Z.txt', 'Z'), file('same.txt', 'S'), file('dir-in-way', 'D')];
  const plan = planPull(remote, null, local({
    'a.txt': { kind: 'file', oid: oid('A1') },
    'same.txt': { kind: 'file', oid: oid('S') },
    'dir-in-way': { kind: 'other' },
  }));
  assert.deepEqual(plan.writes, [
    { name: 'Z.txt', oid: oid('Z'), created: true },
    { name: 'a.txt', oid: oid('A2'), created: false },
    { name: 'b.txt', oid: oid('B'), created: true },
    { name: 'dir-in-way', oid: oid('D'), created: false },
  ]);
  assert.deepEqual(plan.deletes, []);
  assert.deepEqual(plan.skipped, []);
});

test('plan: deletes only files of the last synced tree that the remote dropped and that are still files locally', () => {
  const base = [file('gone.txt', 'g'), file('gone-already.txt', 'x'), file('gone-dir', 'y'), file('kept.txt', 'k'), { path: 'old-link', mode: '120000', oid: oid('t') }];
  const remote = [file('kept.txt', 'k')];
  const plan = planPull(remote, base, local({
    'gone.txt': { kind: 'file', oid: oid('edited locally') },
    'gone-dir': { kind: 'other' },
    'kept.txt': { kind: 'file', oid: oid('k') },
    'old-link': { kind: 'file', oid: oid('t') },
  }));
  assert.deepEqual(plan.deletes, ['gone.txt'], 'remote wins over a local edit; missing, non-files and skipped entries are not deleted');
  assert.deepEqual(plan.writes, []);
  // A first pull (no base) deletes nothing.
  assert.deepEqual(planPull(remote, null, local({ 'gone.txt': { kind: 'file', oid: oid('g') } })).deletes, []);
});

test('plan: symlinks, submodules, temp names, names breaking the project-file-name rules and paths leaving the root are skipped with a reason; an exec-bit change alone writes nothing', () => {
  const remote: TreeEntry[] = [
    { path: 'link', mode: '120000', oid: oid('x') },
    { path: 'vendor/lib', mode: '160000', oid: 'a'.repeat(40) },
    file('d/.service-tmp-0123456789abcdef01234567', 't'),
    file('bad\\name.txt', 'b'),
    file('via-link/escape.txt', 'e'),
    file('run.sh', '#!/bin/sh\n', '100755'),
  ];
  const plan = planPull(remote, null, local({
    'via-link/escape.txt': { kind: 'invalid', reason: 'invalid file name "via-link/escape.txt": path leaves the project root' },
    'run.sh': { kind: 'file', oid: oid('#!/bin/sh\n') },
  }));
  assert.deepEqual(plan.writes, []);
  assert.deepEqual(plan.skipped, [
    { name: 'bad\\name.txt', reason: 'invalid file name "bad\\\\name.txt": backslashes are not allowed' },
    { name: 'd/.service-tmp-0123456789abcdef01234567', reason: 'the name is reserved for temporary files' },
    { name: 'link', reason: 'symlinks are not synced' },
    { name: 'vendor/lib', reason: 'submodules are not synced' },
    { name: 'via-link/escape.txt', reason: 'invalid file name "via-link/escape.txt": path leaves the project root' },
  ]);
});

test('credentials: taken out of https URLs, overridden by the env file, a token alone as user name; ssh and file URLs untouched', () => {
  assert.deepEqual(gitRemote('https://u:p%40ss@host.example/x.git', {}), { url: 'https://host.example/x.git', credentials: { username: 'u', password: 'p@ss' } });
  assert.deepEqual(gitRemote('https://u:old@host.example/x.git', { GIT_USERNAME: 'v', GIT_PASSWORD: 'new' }), { url: 'https://host.example/x.git', credentials: { username: 'v', password: 'new' } });
  assert.deepEqual(gitRemote('https://host.example/x.git', { GIT_PASSWORD: 'tok' }), { url: 'https://host.example/x.git', credentials: { username: 'git', password: 'tok' } });
  assert.deepEqual(gitRemote('https://ghp_0123456789abcdefghij@github.com/o/r.git', {}), { url: 'https://github.com/o/r.git', credentials: { username: 'ghp_0123456789abcdefghij', password: '' } });
  assert.deepEqual(gitRemote('git@github.com:o/r.git', {}), { url: 'git@github.com:o/r.git', credentials: null });
  assert.deepEqual(gitRemote('file:///srv/git/beta.git', {}), { url: 'file:///srv/git/beta.git', credentials: null });
});

test('credentials are stripped from messages: URL userinfo, the password anywhere, a token-like user name anywhere, a short user name only in URLs', () => {
  const r = gitRemote('https://alice:s3cret-pw@host/x.git', {});
  assert.equal(stripCredentials("fatal: unable to access 'https://alice:s3cret-pw@host/x.git/': said s3cret-pw and s3cret%2Dpw", r), "fatal: unable to access 'https://***@host/x.git/': said *** and s3cret%2Dpw");
  const token = gitRemote('https://ghp_0123456789abcdefghij@github.com/o/r.git', {});
  assert.equal(stripCredentials('user ghp_0123456789abcdefghij refused', token), 'user *** refused');
  const short = gitRemote('https://git@host/x.git', {});
  assert.equal(stripCredentials('git fetch failed at https://git@host/x.git', short), 'git fetch failed at https://***@host/x.git');
});

test('tree transaction: a crash half-way through an apply is rolled back by the next pull (journal on disk), exactly', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'git-tx-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'files');
  const gitDir = path.join(base, 'git');
  await mkdir(path.join(root, 'del'), { recursive: true });
  await mkdir(path.join(root, 'emptydir'));
  await mkdir(gitDir);
  await writeFile(path.join(root, 'a-upd.txt'), 'old\n');
  await writeFile(path.join(root, 'del/x.txt'), 'x\n');
  await writeFile(path.join(root, 'keep.txt'), 'keep\n');
  const before = await treeSnapshot(root);
  const tree = new ProjectTree(root);
  const content: Record<string, string> = { [oid('new\n')]: 'new\n', [oid('n\n')]: 'n\n', [oid('e\n')]: 'e\n' };
  const plan = {
    deletes: ['del/x.txt'],
    writes: [
      { name: 'a-upd.txt', oid: oid('new\n'), created: false },
      { name: 'emptydir/e.txt', oid: oid('e\n'), created: true },
      { name: 'new/deep/n.txt', oid: oid('n\n'), created: true },
      { name: 'z-never.txt', oid: oid('z\n'), created: true },
    ],
    skipped: [],
  };
  const tx = await TreeTransaction.begin(tree, gitDir, plan);
  // The process "dies" when it reaches the last file: no rollback runs.
  await assert.rejects(tx.apply(async (o) => {
    if (content[o] === undefined) throw new Error('killed');
    return Buffer.from(content[o]);
  }), /killed/);
  const during = await treeSnapshot(root);
  assert.equal(during['a-upd.txt'], 'new\n');
  assert.equal(during['new/deep/n.txt'], 'n\n');
  assert.equal(during['del/x.txt'], undefined);
  assert.equal(during['del'], undefined, 'the emptied directory went with the delete');

  assert.equal(await recoverInterruptedPull(tree, gitDir), true);
  assert.deepEqual(await treeSnapshot(root), before);
  assert.deepEqual(await readdir(gitDir), [], 'journal and backups removed');
  assert.equal(await recoverInterruptedPull(tree, gitDir), false);
});

test('tree transaction: recovery keeps what changed after the crash (an API save over a planned path is not undone)', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'git-tx-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'files');
  const gitDir = path.join(base, 'git');
  await mkdir(root, { recursive: true });
  await mkdir(gitDir);
  await writeFile(path.join(root, 'u.txt'), 'old\n');
  const tree = new ProjectTree(root);
  const tx = await TreeTransaction.begin(tree, gitDir, { deletes: [], writes: [{ name: 'c.txt', oid: oid('c\n'), created: true }, { name: 'u.txt', oid: oid('u\n'), created: false }], skipped: [] });
  await tx.apply(async (o) => Buffer.from(o === oid('c\n') ? 'c\n' : 'u\n'));
  // After the "crash", someone saves both files before the next pull.
  await writeFile(path.join(root, 'c.txt'), 'saved by the API\n');
  await writeFile(path.join(root, 'u.txt'), 'saved too\n');
  assert.equal(await recoverInterruptedPull(tree, gitDir), true);
  assert.deepEqual(await treeSnapshot(root), { 'c.txt': 'saved by the API\n', 'u.txt': 'saved too\n' });
  assert.equal(await stat(path.join(gitDir, 'service-pull')).then(() => true, () => false), false);
});
