// Git sync through POST /project/git/pull (the pull steps, its result, the acceptance rows
// 25–28) with a real local bare repository as the remote (file:// URL, no
// network): preconditions, the first pull, add/change/delete with exact
// lists, no-op pulls, API edits overwritten, files never in the repository
// left alone, invalid job files, default jobs exactly once, jobs of deleted
// and retyped files, skipped entries, five concurrent pulls, and a pull that
// fails half-way leaving the tree exactly as it was. Tests run in order and
// share project beta's remote.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ProjectTree } from '../engine/files/project-tree.js';
import { blobOid } from '../engine/git/local-files.js';
import { TreeTransaction } from '../engine/git/tree-transaction.js';
import { projectPaths } from '../engine/daemon-projects/index.js';
import { JOB_ID, startApiServer, TIME, type ApiServer } from './helpers/api-server.js';
import { createGitRemote, treeSnapshot, type GitRemoteRepo } from './helpers/git-remote.js';

let api: ApiServer;
let remote: GitRemoteRepo;
/** Shared between the ordered tests. */
const state: { first?: string; ordersJob?: string; ownJob?: string } = {};

const ORDERS = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.orders:\n    object: main.orders\n    mode: full-refresh\n';
const ORDERS_V2 = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.orders:\n    object: main.orders_copy\n    mode: full-refresh\n';
const DAILY = 'steps:\n  - log: hello\n';
const BAD_YAML = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    mode: full-refresh\n   object: x\n';
const MERGE = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n    mode: merge\n';

const pull = (token = api.beta.token, body: unknown = {}) => api.request('POST', '/project/git/pull', { token, body });
const jobsOf = async (filter: Record<string, unknown> = {}) => (await api.request('POST', '/project/job/list', { token: api.beta.token, body: filter })).body.jobs as any[];
const gitOf = async () => (await api.request('GET', '/project/get', { token: api.beta.token })).body.git;
const save = (name: string, body: string) => api.request('POST', '/project/file/save', { token: api.beta.token, body: { file: { name, body } } });
const names = (files: { name: string }[]) => files.map((f) => f.name);
const onDisk = (name: string) => readFile(path.join(api.beta.root, name), 'utf8');
const exists = (name: string) => lstat(path.join(api.beta.root, name)).then(() => true, () => false);

before(async () => {
  api = await startApiServer();
  remote = await createGitRemote(api.base);
  state.first = await remote.commit({ 'README.md': '# beta\n', 'replications/orders.yaml': ORDERS });
  // Fixture: beta has a git URL, --git-enabled=false --git-poll 0.
  await api.store.updateProjectGit(api.beta.id, { url: remote.url, branch: 'main', enabled: false, poll_interval: 0, last_sha: null, last_pull: null, last_error: null });
});

after(async () => {
  await api.close();
});

test('row 25: not configured (acme) and disabled (beta) are 409; nothing is fetched or stored', async () => {
  assert.deepEqual((await pull(api.acme.token)).body, { error: 'git integration is not configured', code: 'conflict' });
  assert.equal((await pull(api.acme.token)).status, 409);
  const res = await pull();
  assert.equal(res.status, 409);
  assert.deepEqual(res.body, { error: 'git integration is disabled', code: 'conflict' });
  const git = await gitOf();
  assert.deepEqual({ last_sha: git.last_sha, last_pull: git.last_pull, last_error: git.last_error }, { last_sha: null, last_pull: null, last_error: null });
  assert.equal(await stat(projectPaths(api.dataDir, api.beta.id).git).then(() => true, () => false), false, 'no git metadata made');
});

test('the request body must be {}: any field is 400', async () => {
  const res = await pull(api.beta.token, { branch: 'main' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, { error: 'unknown field "branch"', code: 'bad_request' });
});

test('row 26: a branch missing on the remote is 422 (code conflict) naming it; stored in git.last_error', async () => {
  await api.store.updateProjectGit(api.beta.id, { enabled: true, branch: 'nope' });
  const res = await pull();
  assert.equal(res.status, 422);
  assert.deepEqual(res.body, { error: 'branch "nope" does not exist on remote', code: 'conflict' });
  const git = await gitOf();
  assert.equal(git.last_error, 'branch "nope" does not exist on remote');
  assert.equal(git.last_sha, null);
  assert.deepEqual(await readdir(api.beta.root), []);
});

test('row 27: the first pull creates every file and a default job for the valid job file; again → the exact no-op body', async () => {
  await api.store.updateProjectGit(api.beta.id, { branch: 'main' });
  const res = await pull();
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const b = res.body;
  assert.deepEqual(Object.keys(b).sort(), ['created', 'created_files', 'deleted', 'deleted_file_names', 'invalid_files', 'pulled', 'sha', 'updated', 'updated_files']);
  assert.deepEqual({ pulled: b.pulled, created: b.created, updated: b.updated, deleted: b.deleted, sha: b.sha }, { pulled: true, created: 2, updated: 0, deleted: 0, sha: state.first });
  assert.deepEqual(names(b.created_files), ['README.md', 'replications/orders.yaml']);
  for (const f of b.created_files) {
    assert.deepEqual(Object.keys(f).sort(), ['is_dir', 'name', 'size', 'updated'], 'File without body');
    assert.equal(f.is_dir, false);
    assert.match(f.updated, TIME);
  }
  assert.deepEqual(b.created_files.map((f: any) => f.size), [7, ORDERS.length]);
  assert.deepEqual([b.updated_files, b.deleted_file_names, b.invalid_files], [[], [], []]);
  assert.equal(await onDisk('replications/orders.yaml'), ORDERS);
  assert.equal(await exists('.git'), false, 'the tree has no .git');

  const jobs = await jobsOf();
  assert.equal(jobs.length, 1);
  assert.deepEqual({ name: jobs[0].name, type: jobs[0].type, file_name: jobs[0].file_name, default: jobs[0].default, active: jobs[0].active }, { name: 'orders', type: 'replication', file_name: 'replications/orders.yaml', default: true, active: false });
  assert.match(jobs[0].id, JOB_ID);
  state.ordersJob = jobs[0].id;

  const git = await gitOf();
  assert.equal(git.last_sha, state.first);
  assert.match(git.last_pull, TIME);
  assert.equal(git.last_error, null, 'a success clears the last error');

  await new Promise((r) => setTimeout(r, 5));
  const again = await pull();
  assert.equal(again.status, 200);
  assert.deepEqual(again.body, { pulled: false, created: 0, updated: 0, deleted: 0, sha: state.first, created_files: [], updated_files: [], deleted_file_names: [], invalid_files: [] });
  const after = await gitOf();
  assert.ok(after.last_pull > git.last_pull, 'a no-op pull updates last_pull');
  assert.equal((await jobsOf()).length, 1);
});

test('row 28: an API edit is overwritten by the remote content; a new remote file is created', async () => {
  assert.equal((await save('README.md', 'edited through the API\n')).status, 200);
  const sha = await remote.commit({ 'README.md': '# beta, second\n', 'x.txt': 'x\n' });
  const res = await pull();
  assert.equal(res.status, 200);
  assert.equal(res.body.pulled, true);
  assert.equal(res.body.sha, sha);
  assert.deepEqual(names(res.body.created_files), ['x.txt']);
  assert.deepEqual(names(res.body.updated_files), ['README.md']);
  assert.deepEqual(res.body.deleted_file_names, []);
  assert.equal(await onDisk('README.md'), '# beta, second\n');
});

test('a commit adding, changing and deleting files: exact counts and lists; files never in the repository are left alone', async () => {
  await save('local/notes.txt', 'mine\n');
  await save('x.txt.bak', 'not in git\n');
  const sha = await remote.commit({
    'pipelines/daily.yaml': DAILY,
    'docs/a/b.md': 'deep\n',
    'replications/orders.yaml': ORDERS_V2,
    'README.md': '# beta, third\n',
    'x.txt': null,
  });
  const res = await pull();
  assert.equal(res.status, 200);
  const b = res.body;
  assert.deepEqual({ pulled: b.pulled, created: b.created, updated: b.updated, deleted: b.deleted, sha: b.sha }, { pulled: true, created: 2, updated: 2, deleted: 1, sha });
  assert.deepEqual(names(b.created_files), ['docs/a/b.md', 'pipelines/daily.yaml']);
  assert.deepEqual(names(b.updated_files), ['README.md', 'replications/orders.yaml']);
  assert.deepEqual(b.deleted_file_names, ['x.txt']);
  assert.deepEqual(b.invalid_files, []);
  assert.equal(await exists('x.txt'), false);
  assert.equal(await onDisk('local/notes.txt'), 'mine\n');
  assert.equal(await onDisk('x.txt.bak'), 'not in git\n');
  assert.equal(await onDisk('replications/orders.yaml'), ORDERS_V2);
  const jobs = await jobsOf();
  assert.deepEqual(jobs.map((j) => [j.name, j.type, j.file_name, j.default]), [
    ['orders', 'replication', 'replications/orders.yaml', true],
    ['daily', 'pipeline', 'pipelines/daily.yaml', true],
  ]);
  assert.equal(jobs[0].id, state.ordersJob, 'an updated job file keeps its default job');
});

test('an invalid job file is written and reported with its problems, gets no job; fixed later it gets exactly one', async () => {
  const sha = await remote.commit({ 'replications/bad.yaml': BAD_YAML, 'replications/merge.yaml': MERGE });
  const res = await pull();
  assert.equal(res.status, 200);
  assert.equal(res.body.sha, sha);
  assert.deepEqual(names(res.body.created_files), ['replications/bad.yaml', 'replications/merge.yaml']);
  const invalid = res.body.invalid_files;
  assert.deepEqual(invalid.map((f: any) => f.name), ['replications/bad.yaml', 'replications/merge.yaml']);
  assert.equal(invalid[0].problems[0].path, '');
  assert.equal(invalid[0].problems[0].line, 6);
  assert.deepEqual(invalid[1].problems, [{ path: 'streams["public.users"].mode', message: 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill', line: 6, column: 11 }]);
  assert.equal(await onDisk('replications/bad.yaml'), BAD_YAML, 'still written');
  assert.deepEqual((await jobsOf({ file_name: 'replications/bad.yaml' })).length, 0);
  assert.deepEqual((await jobsOf({ file_name: 'replications/merge.yaml' })).length, 0);

  await remote.commit({ 'replications/merge.yaml': MERGE.replace('merge', 'incremental') });
  const fixed = await pull();
  assert.deepEqual(names(fixed.body.updated_files), ['replications/merge.yaml']);
  assert.deepEqual(fixed.body.invalid_files, [], 'unchanged invalid files are not reported again');
  const jobs = await jobsOf({ file_name: 'replications/merge.yaml' });
  assert.deepEqual(jobs.map((j) => [j.name, j.default]), [['merge', true]]);

  // Exactly once across repeated pulls: a no-op and an unrelated commit change nothing.
  assert.equal((await pull()).body.pulled, false);
  await remote.commit({ 'other.txt': 'o\n' });
  assert.equal((await pull()).body.created, 1);
  assert.equal((await jobsOf({ file_name: 'replications/merge.yaml' })).length, 1);
  assert.equal((await jobsOf()).length, 3);
});

test('a deleted job file takes its default job along, other jobs on it become inactive; emptied directories go', async () => {
  const own = await api.request('POST', '/project/job/save', { token: api.beta.token, body: { job: { name: 'orders nightly', type: 'replication', file_name: 'replications/orders.yaml', active: true } } });
  assert.equal(own.status, 200);
  state.ownJob = own.body.id;
  await remote.commit({ 'replications/orders.yaml': null, 'docs/a/b.md': null });
  const res = await pull();
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.deleted_file_names, ['docs/a/b.md', 'replications/orders.yaml']);
  assert.equal(res.body.deleted, 2);
  assert.equal(await exists('docs'), false, 'docs/a and docs were left empty and removed');
  assert.equal(await exists('replications'), true, 'still holds other files');
  const jobs = await jobsOf();
  assert.equal(jobs.find((j) => j.id === state.ordersJob), undefined, 'default job deleted');
  const mine = jobs.find((j) => j.id === state.ownJob);
  assert.equal(mine.active, false);
  // Running it now is the 409 of a missing job file.
  const run = await api.request('POST', '/project/job/run', { token: api.beta.token, body: { job_id: state.ownJob } });
  assert.equal(run.status, 409);
});

test('a kind change: the default job follows, other jobs whose type no longer matches become inactive; a job file turned plain loses its default job', async () => {
  await remote.commit({ 'jobs/flip.yaml': DAILY });
  await pull();
  const [dflt] = await jobsOf({ file_name: 'jobs/flip.yaml' });
  assert.equal(dflt.type, 'pipeline');
  const other = await api.request('POST', '/project/job/save', { token: api.beta.token, body: { job: { name: 'flip manual', type: 'pipeline', file_name: 'jobs/flip.yaml', active: true } } });
  assert.equal(other.status, 200);
  await remote.commit({ 'jobs/flip.yaml': ORDERS });
  assert.deepEqual(names((await pull()).body.updated_files), ['jobs/flip.yaml']);
  const after = await jobsOf({ file_name: 'jobs/flip.yaml' });
  assert.deepEqual(after.map((j) => [j.id, j.type, j.active]), [[dflt.id, 'replication', false], [other.body.id, 'pipeline', false]]);

  await remote.commit({ 'pipelines/daily.yaml': 'just: data\n' });
  await pull();
  assert.deepEqual(await jobsOf({ file_name: 'pipelines/daily.yaml' }), []);
});

test('symlinks in the repository are skipped and logged', async () => {
  await remote.commit({ 'link-to-readme': { symlink: 'README.md' }, 'plain.txt': 'p\n' });
  const res = await pull();
  assert.deepEqual(names(res.body.created_files), ['plain.txt']);
  assert.equal(await exists('link-to-readme'), false);
  assert.ok(api.logs.some((l) => l.includes('skipped "link-to-readme": symlinks are not synced')), api.logs.join('\n'));
});

test('five simultaneous pulls: exactly one pulled true, the others wait and report pulled false at the same sha', async () => {
  const sha = await remote.commit({ 'concurrent.txt': 'c\n' });
  const results = await Promise.all([1, 2, 3, 4, 5].map(() => pull()));
  assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200]);
  assert.equal(results.filter((r) => r.body.pulled === true).length, 1);
  for (const r of results) assert.equal(r.body.sha, sha);
  const winner = results.find((r) => r.body.pulled)!;
  assert.deepEqual(names(winner.body.created_files), ['concurrent.txt']);
  for (const r of results.filter((x) => !x.body.pulled)) assert.deepEqual(r.body.created_files, []);
});

test('a pull that fails half-way (a remote directory where the tree has a file) leaves the tree exactly as it was', async () => {
  assert.equal((await save('blocked', 'a local file in the way\n')).status, 200);
  const before = await treeSnapshot(api.beta.root);
  const lastSha = (await gitOf()).last_sha;
  // Sorted work: the delete runs first, then aaa.txt (created), README.md (updated), then blocked/inner.txt fails.
  await remote.commit({ 'aaa.txt': 'new\n', 'README.md': '# beta, fourth\n', 'plain.txt': null, 'blocked/inner.txt': 'inner\n' });
  const res = await pull();
  assert.equal(res.status, 409);
  assert.deepEqual(res.body, { error: '"blocked" is not a directory', code: 'conflict' });
  assert.deepEqual(await treeSnapshot(api.beta.root), before);
  const git = await gitOf();
  assert.equal(git.last_sha, lastSha);
  assert.equal(git.last_error, '"blocked" is not a directory');
  assert.deepEqual(await readdir(path.join(projectPaths(api.dataDir, api.beta.id).git)).then((n) => n.filter((x) => x.startsWith('service-'))), [], 'no journal left');

  // Out of the way, the same commit applies.
  await api.request('POST', '/project/file/delete', { token: api.beta.token, body: { name: 'blocked' } });
  const ok = await pull();
  assert.equal(ok.status, 200);
  assert.deepEqual(names(ok.body.created_files), ['aaa.txt', 'blocked/inner.txt']);
  assert.deepEqual(names(ok.body.updated_files), ['README.md']);
  assert.deepEqual(ok.body.deleted_file_names, ['plain.txt']);
  assert.equal((await gitOf()).last_error, null);
});

test('a pull interrupted by a crash (journal left on disk) is rolled back by the next pull before it fetches', async () => {
  const before = await treeSnapshot(api.beta.root);
  const gitDir = projectPaths(api.dataDir, api.beta.id).git;
  const tree = new ProjectTree(api.beta.root);
  const tx = await TreeTransaction.begin(tree, gitDir, {
    deletes: ['README.md'],
    writes: [{ name: 'crash/half.txt', oid: blobOid(Buffer.from('half\n'), 40), created: true }, { name: 'zz.txt', oid: blobOid(Buffer.from('zz\n'), 40), created: true }],
    skipped: [],
  });
  await assert.rejects(tx.apply(async (oid) => {
    if (oid === blobOid(Buffer.from('half\n'), 40)) return Buffer.from('half\n');
    throw new Error('killed');
  }));
  assert.equal(await exists('README.md'), false);
  assert.equal(await onDisk('crash/half.txt'), 'half\n');
  const res = await pull();
  assert.equal(res.status, 200);
  assert.equal(res.body.pulled, false);
  assert.deepEqual(await treeSnapshot(api.beta.root), before);
  assert.ok(api.logs.some((l) => l.includes(`git pull of project ${api.beta.id}: rolled back an interrupted pull`)));
});
