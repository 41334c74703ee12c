// ProjectTree behaviour: the File shape, UTF-8
// versus base64 bodies, listing order and filtering, and the file-system
// errors of save, delete and rename. Each test works in its own temp root.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../engine/errors.js';
import { ProjectTree, type ProjectFile } from '../engine/files/project-tree.js';

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const bases: string[] = [];

after(async () => {
  await Promise.all(bases.map((b) => rm(b, { recursive: true, force: true })));
});

/** A fresh tree whose root does not exist yet, and a sibling directory outside it. */
async function fresh(): Promise<{ tree: ProjectTree; root: string; outside: string }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'files-tree-'));
  bases.push(base);
  const outside = path.join(base, 'outside');
  await mkdir(outside);
  const root = path.join(base, 'root');
  return { tree: new ProjectTree(root), root, outside };
}

async function rejectsWith(p: Promise<unknown>, code: string, message: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof EngineError, String(err));
    assert.equal(err.message, message);
    assert.equal(err.code, code);
    return true;
  });
}

const names = (files: readonly ProjectFile[]): string[] => files.map((f) => f.name);

test('save then get: File shape, UTF-8 body, byte size, RFC 3339 ms timestamp', async () => {
  const { tree, root } = await fresh();
  const saved = await tree.save({ name: 'replications/users.yaml', body: 'source: WAREHOUSE\nnote: héllo ${VAR}\n' });
  assert.deepEqual(Object.keys(saved).sort(), ['is_dir', 'name', 'size', 'updated']);
  assert.equal(saved.name, 'replications/users.yaml');
  assert.equal(saved.is_dir, false);
  assert.equal(saved.size, Buffer.byteLength('source: WAREHOUSE\nnote: héllo ${VAR}\n'));
  assert.match(saved.updated, TIME);
  const got = await tree.get('replications/users.yaml');
  assert.deepEqual(got, { name: 'replications/users.yaml', body: 'source: WAREHOUSE\nnote: héllo ${VAR}\n', is_dir: false, updated: saved.updated, size: saved.size });
  assert.equal(await readFile(path.join(root, 'replications', 'users.yaml'), 'utf8'), 'source: WAREHOUSE\nnote: héllo ${VAR}\n');
  assert.equal((await stat(path.join(root, 'replications', 'users.yaml'))).mtime.toISOString(), saved.updated);
});

test('save replaces content and creates missing parents; empty body allowed', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'a/b/c/d.txt', body: 'one' });
  await tree.save({ name: 'a/b/c/d.txt', body: 'two!' });
  assert.equal((await tree.get('a/b/c/d.txt')).body, 'two!');
  assert.equal((await tree.get('a/b/c/d.txt')).size, 4);
  assert.equal((await tree.get('a/b')).is_dir, true);
  const empty = await tree.save({ name: 'empty.txt' });
  assert.equal(empty.size, 0);
  assert.equal((await tree.get('empty.txt')).body, '');
});

test('save keeps the permission bits of the file it replaces', async () => {
  const { tree, root } = await fresh();
  await tree.save({ name: 'run.sh', body: '#!/bin/sh\n' });
  await chmod(path.join(root, 'run.sh'), 0o750);
  await tree.save({ name: 'run.sh', body: '#!/bin/sh\necho hi\n' });
  assert.equal((await stat(path.join(root, 'run.sh'))).mode & 0o777, 0o750);
});

test('non-UTF-8 bytes round-trip through base64; UTF-8 bytes sent as base64 come back as text', async () => {
  const { tree, root } = await fresh();
  const bytes = Buffer.from([0x50, 0x41, 0x52, 0x31, 0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28, 0x0a]);
  const saved = await tree.save({ name: 'seeds/data.parquet', body: bytes.toString('base64'), encoding: 'base64' });
  assert.equal(saved.size, bytes.length);
  assert.deepEqual(await readFile(path.join(root, 'seeds', 'data.parquet')), bytes);
  const got = await tree.get('seeds/data.parquet');
  assert.equal(got.encoding, 'base64');
  assert.equal(got.body, bytes.toString('base64'));
  assert.equal(got.size, bytes.length);
  assert.deepEqual(Buffer.from(got.body!, 'base64'), bytes);

  await tree.save({ name: 'text.txt', body: Buffer.from('plain é\n').toString('base64'), encoding: 'base64' });
  const text = await tree.get('text.txt');
  assert.equal(text.body, 'plain é\n');
  assert.equal('encoding' in text, false);

  // Unpadded and line-wrapped base64 are accepted too.
  await tree.save({ name: 'unpadded.bin', body: 'AP8', encoding: 'base64' });
  assert.deepEqual(await readFile(path.join(root, 'unpadded.bin')), Buffer.from([0x00, 0xff]));
  await tree.save({ name: 'wrapped.bin', body: 'AP8A\r\n/w==', encoding: 'base64' });
  assert.deepEqual(await readFile(path.join(root, 'wrapped.bin')), Buffer.from([0x00, 0xff, 0x00, 0xff]));
});

test('save rejects invalid base64 and writes nothing', async () => {
  const { tree } = await fresh();
  for (const body of ['abc!', 'A', 'AB=', 'A===', 'AAAA==', '====', 'ä']) {
    await rejectsWith(tree.save({ name: 'x.bin', body, encoding: 'base64' }), 'bad_request', 'body must be valid base64');
  }
  assert.equal(await tree.exists('x.bin'), false);
});

test('save with is_dir creates the directory (idempotent) and refuses a body', async () => {
  const { tree, root } = await fresh();
  const dir = await tree.save({ name: 'models/staging', is_dir: true });
  assert.deepEqual(Object.keys(dir).sort(), ['is_dir', 'name', 'size', 'updated']);
  assert.equal(dir.is_dir, true);
  assert.equal(dir.size, 0);
  assert.ok((await stat(path.join(root, 'models', 'staging'))).isDirectory());
  await tree.save({ name: 'models/staging', is_dir: true, body: '' });
  await rejectsWith(tree.save({ name: 'models/other', is_dir: true, body: 'x' }), 'bad_request', 'body must be empty when is_dir is true');
  assert.equal(await tree.exists('models/other'), false);
});

test('save conflicts: a directory at the name, a file in the parent chain', async () => {
  const { tree, root } = await fresh();
  await tree.save({ name: 'a/b/c.txt', body: 'x' });
  await rejectsWith(tree.save({ name: 'a/b', body: 'y' }), 'conflict', '"a/b" is a directory');
  await rejectsWith(tree.save({ name: 'a/b/c.txt/d.txt', body: 'y' }), 'conflict', '"a/b/c.txt" is not a directory');
  await rejectsWith(tree.save({ name: 'a/b/c.txt/e/f.txt', body: 'y' }), 'conflict', '"a/b/c.txt" is not a directory');
  await rejectsWith(tree.save({ name: 'a/b/c.txt', is_dir: true }), 'conflict', '"a/b/c.txt" is not a directory');
  await rejectsWith(tree.save({ name: 'a/b/c.txt/sub', is_dir: true }), 'conflict', '"a/b/c.txt" is not a directory');
  assert.equal(await readFile(path.join(root, 'a', 'b', 'c.txt'), 'utf8'), 'x');
  assert.deepEqual(await readdir(path.join(root, 'a', 'b')), ['c.txt']);
});

test('save validates the name before touching the disk', async () => {
  const { tree, root, outside } = await fresh();
  await rejectsWith(tree.save({ name: '../outside.txt', body: 'x' }), 'bad_request', 'invalid file name "../outside.txt": ".." segments are not allowed');
  await rejectsWith(tree.save({ name: '/etc/passwd', body: 'x' }), 'bad_request', 'invalid file name "/etc/passwd": absolute paths are not allowed');
  await rejectsWith(tree.save({ name: 'a\\b.txt', body: 'x' }), 'bad_request', 'invalid file name "a\\\\b.txt": backslashes are not allowed');
  await rejectsWith(tree.save({ name: '.git/config', body: 'x' }), 'bad_request', 'invalid file name ".git/config": ".git" segments are not allowed');
  // Name rules come before body rules.
  await rejectsWith(tree.save({ name: 'a//b', is_dir: true, body: 'x' }), 'bad_request', 'invalid file name "a//b": empty or "." segments are not allowed');
  await rejectsWith(tree.save({ name: 'a//b', body: '!', encoding: 'base64' }), 'bad_request', 'invalid file name "a//b": empty or "." segments are not allowed');
  await assert.rejects(stat(root), { code: 'ENOENT' });
  await mkdir(root);
  await symlink(outside, path.join(root, 'link'));
  await rejectsWith(tree.save({ name: 'link/x.txt', body: 'x' }), 'bad_request', 'invalid file name "link/x.txt": path leaves the project root');
  await rejectsWith(tree.save({ name: 'link/new/x.txt', body: 'x' }), 'bad_request', 'invalid file name "link/new/x.txt": path leaves the project root');
  assert.deepEqual(await readdir(outside), []);
});

test('get: 404 for missing names and paths through a file; directories have an empty body', async () => {
  const { tree } = await fresh();
  await rejectsWith(tree.get('nope.txt'), 'not_found', 'file "nope.txt" not found');
  await tree.save({ name: 'dir/f.txt', body: 'f' });
  await rejectsWith(tree.get('dir/g.txt'), 'not_found', 'file "dir/g.txt" not found');
  await rejectsWith(tree.get('dir/f.txt/x'), 'not_found', 'file "dir/f.txt/x" not found');
  const dir = await tree.get('dir');
  assert.deepEqual({ ...dir, updated: 'T' }, { name: 'dir', body: '', is_dir: true, updated: 'T', size: 0 });
  assert.match(dir.updated, TIME);
  await rejectsWith(tree.get('x/../y'), 'bad_request', 'invalid file name "x/../y": ".." segments are not allowed');
});

test('get follows symlinks inside the root and refuses ones leaving it', async () => {
  const { tree, root, outside } = await fresh();
  await tree.save({ name: 'sub/a.txt', body: 'inside' });
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink('sub', path.join(root, 'in'));
  await symlink(outside, path.join(root, 'link'));
  assert.equal((await tree.get('in/a.txt')).body, 'inside');
  await rejectsWith(tree.get('link/secret.txt'), 'bad_request', 'invalid file name "link/secret.txt": path leaves the project root');
});

test('readText, exists, isFile and stat', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'q/a.sql', body: 'select 1' });
  assert.equal(await tree.readText('q/a.sql'), 'select 1');
  await rejectsWith(tree.readText('q/b.sql'), 'not_found', 'file "q/b.sql" not found');
  await rejectsWith(tree.readText('q'), 'not_found', 'file "q" not found');
  assert.equal(await tree.exists('q'), true);
  assert.equal(await tree.exists('q/a.sql'), true);
  assert.equal(await tree.exists('q/b.sql'), false);
  assert.equal(await tree.isFile('q/a.sql'), true);
  assert.equal(await tree.isFile('q'), false);
  assert.equal(await tree.isFile('q/b.sql'), false);
  const st = await tree.stat('q/a.sql');
  assert.equal(st?.size, 8);
  assert.equal(st && 'body' in st, false);
  assert.equal(await tree.stat('zzz'), null);
  await rejectsWith(tree.exists('a//b'), 'bad_request', 'invalid file name "a//b": empty or "." segments are not allowed');
});

test('list: recursive, byte-order sorted, directories included, no bodies by default', async () => {
  const { tree } = await fresh();
  for (const name of ['z.txt', 'a/b.txt', 'a-b.txt', 'B.txt', 'é.txt', 'a/c/d.txt', 'a.txt', '😀.txt', '\uffff.txt']) {
    await tree.save({ name, body: name });
  }
  await tree.save({ name: 'empty-dir', is_dir: true });
  const files = await tree.list();
  const expected = ['B.txt', 'a', 'a-b.txt', 'a.txt', 'a/b.txt', 'a/c', 'a/c/d.txt', 'empty-dir', 'z.txt', 'é.txt', '\uffff.txt', '😀.txt'];
  assert.deepEqual(names(files), expected);
  // Byte order differs from JS string order for astral vs. high-BMP characters.
  assert.ok('😀.txt' < '\uffff.txt');
  for (const f of files) {
    assert.equal('body' in f, false);
    assert.match(f.updated, TIME);
    if (f.is_dir) assert.equal(f.size, 0);
    else assert.equal(f.size, Buffer.byteLength(f.name));
  }
  assert.deepEqual(files.filter((f) => f.is_dir).map((f) => f.name), ['a', 'a/c', 'empty-dir']);
});

test('list: include_body gives bodies ("" for directories, base64 when needed)', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'd/t.txt', body: 'text' });
  await tree.save({ name: 'd/b.bin', body: Buffer.from([0xff, 0x00]).toString('base64'), encoding: 'base64' });
  const files = await tree.list({ includeBody: true });
  assert.deepEqual(files.map((f) => ({ ...f, updated: 'T' })), [
    { name: 'd', body: '', is_dir: true, updated: 'T', size: 0 },
    { name: 'd/b.bin', body: '/wA=', encoding: 'base64', is_dir: false, updated: 'T', size: 2 },
    { name: 'd/t.txt', body: 'text', is_dir: false, updated: 'T', size: 4 },
  ]);
});

test('list: prefix is a plain string prefix on the name', async () => {
  const { tree } = await fresh();
  for (const name of ['replications/a.yaml', 'replications/sub/b.yaml', 'replications-old/c.yaml', 'rep.txt', 'pipelines/p.yaml']) {
    await tree.save({ name, body: 'x' });
  }
  assert.deepEqual(names(await tree.list({ prefix: 'replications/' })), ['replications/a.yaml', 'replications/sub', 'replications/sub/b.yaml']);
  assert.deepEqual(names(await tree.list({ prefix: 'replications' })), ['replications', 'replications-old', 'replications-old/c.yaml', 'replications/a.yaml', 'replications/sub', 'replications/sub/b.yaml']);
  assert.deepEqual(names(await tree.list({ prefix: 'rep' })).length, 7);
  assert.deepEqual(names(await tree.list({ prefix: 'replications/sub/b' })), ['replications/sub/b.yaml']);
  assert.deepEqual(names(await tree.list({ prefix: 'nothing' })), []);
  assert.deepEqual(names(await tree.list({ prefix: '' })).length, 9);
  await rejectsWith(tree.list({ prefix: '../' }), 'bad_request', 'invalid prefix "../": ".." is not allowed');
  await rejectsWith(tree.list({ prefix: 'a\0' }), 'bad_request', 'invalid prefix: NUL bytes are not allowed');
});

test('list: never .git, temporaries, bad names, special files or symlinks leaving the root', async () => {
  const { tree, root, outside } = await fresh();
  await tree.save({ name: 'keep.txt', body: 'k' });
  await tree.save({ name: 'sub/inner.txt', body: 'i' });
  await mkdir(path.join(root, '.git', 'objects'), { recursive: true });
  await writeFile(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await mkdir(path.join(root, 'sub', '.git'));
  await writeFile(path.join(root, '.service-tmp-0123456789abcdef01234567'), 'partial');
  await writeFile(path.join(root, 'back\\slash.txt'), 'b');
  await writeFile(path.join(outside, 'secret.txt'), 's');
  await symlink(outside, path.join(root, 'out-dir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'));
  await symlink('nowhere', path.join(root, 'dangling'));
  await symlink('sub', path.join(root, 'in-dir'));
  await symlink('keep.txt', path.join(root, 'in-file'));
  assert.deepEqual(await tree.list().then((fs) => fs.map((f) => [f.name, f.is_dir])), [
    ['in-dir', true], // listed, not entered: no cycles, no duplicates
    ['in-file', false],
    ['keep.txt', false],
    ['sub', true],
    ['sub/inner.txt', false],
  ]);
  assert.equal(await tree.countFiles(), 3);
});

test('list and countFiles of a root that does not exist yet', async () => {
  const { tree } = await fresh();
  assert.deepEqual(await tree.list(), []);
  assert.equal(await tree.countFiles(), 0);
});

test('countFiles counts regular files only', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'a/b/c.txt', body: '' });
  await tree.save({ name: 'a/d.txt', body: 'x' });
  await tree.save({ name: 'e', is_dir: true });
  assert.equal(await tree.countFiles(), 2);
});

test('delete: a file, a directory subtree, and 404 for missing names', async () => {
  const { tree, root } = await fresh();
  await tree.save({ name: 'a/b/c.txt', body: 'c' });
  await tree.save({ name: 'a/b/d/e.txt', body: 'e' });
  await tree.save({ name: 'a/f.txt', body: 'f' });
  await tree.save({ name: 'a/empty', is_dir: true });
  assert.deepEqual(await tree.delete('a/f.txt'), ['a/f.txt']);
  assert.equal(await tree.exists('a/f.txt'), false);
  assert.deepEqual(await tree.delete('a/b'), ['a/b/c.txt', 'a/b/d/e.txt']);
  assert.equal(await tree.exists('a/b'), false);
  assert.deepEqual(await tree.delete('a/empty'), []);
  assert.deepEqual(names(await tree.list()), ['a']);
  await rejectsWith(tree.delete('a/b'), 'not_found', 'file "a/b" not found');
  await rejectsWith(tree.delete('missing.txt'), 'not_found', 'file "missing.txt" not found');
  await rejectsWith(tree.delete('../a'), 'bad_request', 'invalid file name "../a": ".." segments are not allowed');
  await rejectsWith(tree.delete('a/'), 'bad_request', 'invalid file name "a/": empty or "." segments are not allowed');
  assert.ok((await stat(root)).isDirectory());
});

test('delete of a symlink removes the link, not its target', async () => {
  const { tree, root } = await fresh();
  await tree.save({ name: 'sub/a.txt', body: 'a' });
  await symlink('sub', path.join(root, 'in'));
  assert.deepEqual(await tree.delete('in'), ['in']);
  await assert.rejects(lstat(path.join(root, 'in')), { code: 'ENOENT' });
  assert.equal(await tree.readText('sub/a.txt'), 'a');
});

test('rename: a file, a directory subtree, parents of the new name created', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'replications/users.yaml', body: 'u' });
  const moved = await tree.rename('replications/users.yaml', 'replications/crm_users.yaml');
  assert.deepEqual(Object.keys(moved).sort(), ['is_dir', 'name', 'size', 'updated']);
  assert.equal(moved.name, 'replications/crm_users.yaml');
  assert.equal(moved.size, 1);
  assert.equal(await tree.exists('replications/users.yaml'), false);
  await tree.save({ name: 'old/x/1.txt', body: '1' });
  await tree.save({ name: 'old/2.txt', body: '2' });
  const dir = await tree.rename('old', 'new/deeper/place');
  assert.equal(dir.is_dir, true);
  assert.equal(dir.size, 0);
  assert.deepEqual(names(await tree.list()), ['new', 'new/deeper', 'new/deeper/place', 'new/deeper/place/2.txt', 'new/deeper/place/x', 'new/deeper/place/x/1.txt', 'replications', 'replications/crm_users.yaml']);
  assert.equal(await tree.readText('new/deeper/place/x/1.txt'), '1');
});

test('rename errors: into itself, missing old, existing new, a file in the new parent chain, bad names', async () => {
  const { tree } = await fresh();
  await tree.save({ name: 'a/b.txt', body: 'b' });
  await tree.save({ name: 'c.txt', body: 'c' });
  await rejectsWith(tree.rename('a', 'a/inner'), 'bad_request', 'cannot move "a" into itself');
  await rejectsWith(tree.rename('a', 'a/x/y'), 'bad_request', 'cannot move "a" into itself');
  // The into-itself rule is a 400 checked before the disk is looked at.
  await rejectsWith(tree.rename('missing', 'missing/x'), 'bad_request', 'cannot move "missing" into itself');
  await rejectsWith(tree.rename('nope.txt', 'x.txt'), 'not_found', 'file "nope.txt" not found');
  await rejectsWith(tree.rename('c.txt', 'a/b.txt'), 'conflict', 'file "a/b.txt" already exists');
  await rejectsWith(tree.rename('c.txt', 'a'), 'conflict', 'file "a" already exists');
  await rejectsWith(tree.rename('c.txt', 'c.txt'), 'conflict', 'file "c.txt" already exists');
  await rejectsWith(tree.rename('c.txt', 'a/b.txt/d.txt'), 'conflict', '"a/b.txt" is not a directory');
  await rejectsWith(tree.rename('../c.txt', 'x'), 'bad_request', 'invalid file name "../c.txt": ".." segments are not allowed');
  await rejectsWith(tree.rename('c.txt', '.git/c.txt'), 'bad_request', 'invalid file name ".git/c.txt": ".git" segments are not allowed');
  // "ab" is not inside "a": only whole segments count.
  await tree.rename('a', 'ab');
  assert.deepEqual(names(await tree.list()), ['ab', 'ab/b.txt', 'c.txt']);
});
