// Git fetches over HTTP against a real `git http-backend` on 127.0.0.1
// (POST /project/git/pull, the fetch step, error responses): credentials from the URL or the project
// env file reach the remote but never a response, git.last_error, the
// project resource or a log line; a refused login, an unreachable remote, a
// remote that disappears in the middle of the pack and a fetch that runs
// into the time limit are 502 `git fetch failed: …`, stored in
// git.last_error, and leave the tree exactly as it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { startApiServer, type ApiServer } from './helpers/api-server.js';
import { createGitRemote, startHttpGitServer, treeSnapshot, type GitRemoteRepo, type HttpGitServer } from './helpers/git-remote.js';

const USER = 'alice';
const PASSWORD = 'pw-Secret-4711';
const WRONG = 'pw-Wrong-0815';
const TIMEOUT_MS = 3000;

let api: ApiServer;
let remote: GitRemoteRepo;
let server: HttpGitServer;

const pull = () => api.request('POST', '/project/git/pull', { body: {} });
const gitOf = async () => (await api.request('GET', '/project/get')).body.git;
const configure = (url: string) => api.store.updateProjectGit(api.acme.id, { url, branch: 'main', enabled: true, poll_interval: 0, last_sha: null, last_pull: null, last_error: null });
const envFile = (user: string | null, password: string | null) =>
  writeFile(api.acme.envFile, ['env:', ...(user ? [`  GIT_USERNAME: ${user}`] : []), ...(password ? [`  GIT_PASSWORD: ${password}`] : []), ''].join('\n'));

/** Nothing the client or the logs can see holds a password. */
function assertNoSecrets(...texts: unknown[]) {
  const all = JSON.stringify(texts) + api.logs.join('\n');
  for (const secret of [PASSWORD, WRONG, encodeURIComponent(PASSWORD)]) assert.ok(!all.includes(secret), `a secret leaked: ${all}`);
}

before(async () => {
  api = await startApiServer({ gitFetchTimeoutMs: TIMEOUT_MS });
  remote = await createGitRemote(path.join(api.base, 'repos'), 'shop');
  await remote.commit({ 'README.md': 'shop\n' });
  server = await startHttpGitServer(path.join(api.base, 'repos'), { user: USER, password: PASSWORD });
});

after(async () => {
  await server.close();
  await api.close();
});

test('credentials embedded in the URL reach the remote; the project resource shows the URL redacted', async () => {
  const url = server.url('shop.git').replace('http://', `http://${USER}:${PASSWORD}@`);
  await configure(url);
  const res = await pull();
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.pulled, true);
  assert.deepEqual(res.body.created_files.map((f: any) => f.name), ['README.md']);
  assert.ok(server.authorizations.includes(`Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`));
  const git = await gitOf();
  assert.equal(git.url, server.url('shop.git').replace('http://', 'http://***@'));
  assertNoSecrets(res.body, git);
});

test('credentials from the project env file (GIT_USERNAME / GIT_PASSWORD) with a URL that has none', async () => {
  await configure(server.url('shop.git'));
  await envFile(USER, PASSWORD);
  const sha = await remote.commit({ 'env.txt': 'from env\n' });
  const res = await pull();
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.sha, sha);
  assert.deepEqual(res.body.created_files.map((f: any) => f.name), ['env.txt'], 'README.md is already there with the same content');
  assertNoSecrets(res.body, await gitOf());
});

test('a refused login is 502 git fetch failed, with the credentials stripped from the message, the store and the log', async () => {
  await envFile(USER, WRONG);
  const before = await treeSnapshot(api.acme.root);
  const res = await pull();
  assert.equal(res.status, 502);
  assert.equal(res.body.code, 'internal');
  assert.match(res.body.error, /^git fetch failed: .*Authentication failed/);
  const git = await gitOf();
  assert.equal(git.last_error, res.body.error);
  assert.deepEqual(await treeSnapshot(api.acme.root), before);
  // The same with the wrong password inside the URL.
  await envFile(null, null);
  await api.store.updateProjectGit(api.acme.id, { url: server.url('shop.git').replace('http://', `http://${USER}:${WRONG}@`) });
  const again = await pull();
  assert.equal(again.status, 502);
  assert.match(again.body.error, /^git fetch failed: /);
  assertNoSecrets(res.body, again.body, git, await gitOf());
});

test('the remote disappears in the middle of the pack: 502, the tree and last_sha unchanged; the next pull applies the commit', async () => {
  await configure(server.url('shop.git'));
  await envFile(USER, PASSWORD);
  assert.equal((await pull()).status, 200);
  const synced = (await gitOf()).last_sha;
  const before = await treeSnapshot(api.acme.root);
  const sha = await remote.commit({ 'README.md': 'shop v2\n', 'big.bin': Buffer.alloc(256 * 1024, 7), 'env.txt': null });
  server.mode = 'cut-pack';
  const res = await pull();
  assert.equal(res.status, 502, JSON.stringify(res.body));
  assert.match(res.body.error, /^git fetch failed: /);
  assert.match(res.body.error, /transfer closed|unexpected disconnect/, 'cut off in the middle of the pack');
  assert.deepEqual(await treeSnapshot(api.acme.root), before);
  const git = await gitOf();
  assert.equal(git.last_sha, synced);
  assert.equal(git.last_error, res.body.error);

  server.mode = 'serve';
  const ok = await pull();
  assert.equal(ok.status, 200);
  assert.equal(ok.body.sha, sha);
  assert.deepEqual([ok.body.created_files.map((f: any) => f.name), ok.body.updated_files.map((f: any) => f.name), ok.body.deleted_file_names], [['big.bin'], ['README.md'], ['env.txt']]);
  assert.equal((await gitOf()).last_error, null);
  assertNoSecrets(res.body, ok.body);
});

test('a remote that never answers: 502 after the time limit', async () => {
  server.mode = 'hang';
  try {
    const started = Date.now();
    const res = await pull();
    assert.equal(res.status, 502);
    assert.equal(res.body.error, `git fetch failed: timed out after ${TIMEOUT_MS / 1000} s`);
    assert.ok(Date.now() - started < TIMEOUT_MS + 2000, 'stopped at the limit');
  } finally {
    server.mode = 'serve';
  }
});

test('an unreachable remote and a file:// remote that no longer exists: 502 with git\'s message', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  await api.store.updateProjectGit(api.acme.id, { url: `http://${USER}:${PASSWORD}@127.0.0.1:${port}/shop.git` });
  const res = await pull();
  assert.equal(res.status, 502);
  assert.match(res.body.error, /^git fetch failed: .*(Failed to connect|Couldn't connect)/);
  // git was given the URL without its credentials.
  assert.ok(res.body.error.startsWith(`git fetch failed: fatal: unable to access 'http://127.0.0.1:${port}/shop.git/': `), res.body.error);

  const gone = await createGitRemote(api.base, 'gone');
  await gone.commit({ 'a.txt': 'a\n' });
  await configure(gone.url);
  await rm(gone.bare, { recursive: true });
  const missing = await pull();
  assert.equal(missing.status, 502);
  assert.match(missing.body.error, /^git fetch failed: .*does not appear to be a git repository/);
  assertNoSecrets(res.body, missing.body, await gitOf());
});
