/**
 * Root containment against a sibling whose name starts with the root's name
 *: the project root is `<project>/files`, the neighbour
 * `<project>/files2` holds a secret, and a symlink `sib → ../files2` sits in
 * the root. A containment check that compares prefixes without the trailing
 * separator lets every route below escape; each must refuse it (400) and
 * leave the neighbour untouched — including a git pull whose repository
 * writes under `sib/`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startApiServer, type ApiServer } from './helpers/api-server.js';
import { createGitRemote, type GitRemoteRepo } from './helpers/git-remote.js';

let api: ApiServer;
let sibling: string;
let remote: GitRemoteRepo;
const LEAVES = (name: string) => ({ error: `invalid file name ${JSON.stringify(name)}: path leaves the project root`, code: 'bad_request' });

before(async () => {
  api = await startApiServer();
  sibling = `${api.acme.root}2`; // …/files2: starts with the root's own path
  mkdirSync(sibling);
  writeFileSync(path.join(sibling, 'secret.txt'), 'secret\n');
  symlinkSync('../files2', path.join(api.acme.root, 'sib'));
  writeFileSync(path.join(api.acme.root, 'a.txt'), 'a\n');
  remote = await createGitRemote(api.base);
});

after(async () => {
  await api.close();
});

const siblingUntouched = () => assert.deepEqual(readdirSync(sibling), ['secret.txt']);

test('get, save, delete and rename through the sibling-prefix link are refused', async () => {
  const get = await api.request('GET', `/project/file/get?name=${encodeURIComponent('sib/secret.txt')}`);
  assert.deepEqual([get.status, get.body], [400, LEAVES('sib/secret.txt')]);
  const save = await api.request('POST', '/project/file/save', { body: { file: { name: 'sib/new.txt', body: 'x' } } });
  assert.deepEqual([save.status, save.body], [400, LEAVES('sib/new.txt')]);
  const saveDir = await api.request('POST', '/project/file/save', { body: { file: { name: 'sib/dir', is_dir: true } } });
  assert.deepEqual([saveDir.status, saveDir.body], [400, LEAVES('sib/dir')]);
  const del = await api.request('POST', '/project/file/delete', { body: { name: 'sib/secret.txt' } });
  assert.deepEqual([del.status, del.body], [400, LEAVES('sib/secret.txt')]);
  const renameOut = await api.request('POST', '/project/file/rename', { body: { old_name: 'a.txt', new_name: 'sib/a.txt' } });
  assert.deepEqual([renameOut.status, renameOut.body], [400, LEAVES('sib/a.txt')]);
  const renameIn = await api.request('POST', '/project/file/rename', { body: { old_name: 'sib/secret.txt', new_name: 'b.txt' } });
  assert.deepEqual([renameIn.status, renameIn.body], [400, LEAVES('sib/secret.txt')]);
  siblingUntouched();
  assert.equal(readFileSync(path.join(sibling, 'secret.txt'), 'utf8'), 'secret\n');
});

test('list never shows the sibling\'s files', async () => {
  const list = await api.request('POST', '/project/file/list', { body: { include_body: true } });
  assert.equal(list.status, 200);
  const names = list.body.files.map((f: { name: string }) => f.name);
  assert.ok(!names.some((n: string) => n === 'sib' || n.startsWith('sib/')), names.join(','));
  assert.ok(!JSON.stringify(list.body).includes('secret'), 'no content of the sibling');
});

test('a git pull writing under the sibling-prefix link is refused and writes nothing there', async () => {
  await remote.commit({ 'sib/evil.txt': 'evil\n', 'ok.txt': 'ok\n' });
  await api.store.updateProjectGit(api.acme.id, { url: remote.url, branch: 'main', enabled: true, poll_interval: 0, last_sha: null, last_pull: null, last_error: null });
  const res = await api.request('POST', '/project/git/pull', { body: {} });
  assert.notEqual(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.code, 'bad_request', JSON.stringify(res.body));
  assert.match(res.body.error, /sib\/evil\.txt/);
  siblingUntouched();
  assert.ok(!existsSync(path.join(api.acme.root, 'ok.txt')), 'a refused pull changes nothing');
});
