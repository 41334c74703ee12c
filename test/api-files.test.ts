// Project files through the HTTP API (get, list, save, delete, rename):
// File shapes, job-file validation on save (422 with problems), default
// jobs created with their file, kind changes, deletes and renames with their
// job side effects, the project-file-name rules, and isolation between projects.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fixtureEnv, JOB_ID, startApiServer, TIME, U, type ApiServer } from './helpers/api-server.js';

let api: ApiServer;

before(async () => {
  api = await startApiServer({ acmeEnv: fixtureEnv() });
});

after(async () => {
  await api.close();
});

const save = (file: Record<string, unknown>, token?: string) => api.request('POST', '/project/file/save', { body: { file }, ...(token ? { token } : {}) });
const jobsOf = async (filter: Record<string, unknown> = {}) => (await api.request('POST', '/project/job/list', { body: filter })).body.jobs as any[];
const bad = (error: string) => ({ error, code: 'bad_request' });

async function saveJob(job: Record<string, unknown>): Promise<any> {
  const res = await api.request('POST', '/project/job/save', { body: { job } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

test('row 6: saving a new replication file answers its kind and creates an inactive default job', async () => {
  const res = await save({ name: 'replications/users.yaml', body: U });
  assert.equal(res.status, 200);
  const { file, job_file_kind, default_job_id } = res.body;
  assert.deepEqual(Object.keys(res.body), ['file', 'job_file_kind', 'default_job_id']);
  assert.deepEqual(file, { name: 'replications/users.yaml', is_dir: false, updated: file.updated, size: 132 });
  assert.match(file.updated, TIME);
  assert.equal(job_file_kind, 'replication');
  assert.match(default_job_id, JOB_ID);
  const jobs = await jobsOf();
  assert.equal(jobs.length, 1);
  assert.deepEqual(jobs[0], {
    id: default_job_id, name: 'users', type: 'replication', file_name: 'replications/users.yaml', description: '', active: false, default: true,
    streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    created: jobs[0].created, updated: jobs[0].updated, executed: null, next_run: null,
  });
  assert.match(jobs[0].created, TIME);
});

test('row 7: saving the same file again creates no second default job', async () => {
  const res = await save({ name: 'replications/users.yaml', body: U });
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body), ['file', 'job_file_kind']);
  assert.equal(res.body.job_file_kind, 'replication');
  assert.equal((await jobsOf()).length, 1);
});

test('row 8: a YAML syntax error is 422 with path "" and the line; nothing is written', async () => {
  const body = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    mode: full-refresh\n   object: x\n';
  const res = await save({ name: 'replications/bad.yaml', body });
  assert.equal(res.status, 422);
  assert.equal(res.body.error, 'invalid job file replications/bad.yaml');
  assert.equal(res.body.code, 'invalid_job_file');
  assert.equal(res.body.problems[0].path, '');
  assert.equal(res.body.problems[0].line, 6);
  assert.equal(typeof res.body.problems[0].column, 'number');
  const get = await api.request('GET', '/project/file/get?name=replications%2Fbad.yaml');
  assert.deepEqual(get.body, { error: 'file "replications/bad.yaml" not found', code: 'not_found' });
});

test('row 9: a validation problem is 422 with the path, message, line and column', async () => {
  const res = await save({ name: 'replications/merge.yaml', body: 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n    mode: merge\n' });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body, {
    error: 'invalid job file replications/merge.yaml',
    code: 'invalid_job_file',
    problems: [{ path: 'streams["public.users"].mode', message: 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill', line: 6, column: 11 }],
  });
  assert.equal((await jobsOf({ file_name: 'replications/merge.yaml' })).length, 0);
});

test('row 10: names that leave the root are 400 before anything is written', async () => {
  const cases: [string, string][] = [
    ['../outside.txt', 'invalid file name "../outside.txt": ".." segments are not allowed'],
    ['/etc/passwd', 'invalid file name "/etc/passwd": absolute paths are not allowed'],
    ['a\\b.txt', 'invalid file name "a\\\\b.txt": backslashes are not allowed'],
    ['.git/config', 'invalid file name ".git/config": ".git" segments are not allowed'],
  ];
  for (const [name, error] of cases) {
    const res = await save({ name, body: 'x' });
    assert.equal(res.status, 400, name);
    assert.deepEqual(res.body, bad(error));
  }
  await assert.rejects(access(path.join(api.acme.root, '..', 'outside.txt')));
  const list = await api.request('POST', '/project/file/list', { body: {} });
  assert.deepEqual(list.body.files.map((f: { name: string }) => f.name), ['replications', 'replications/users.yaml']);
  // The same rules apply to every endpoint taking a name.
  for (const [method, p, body] of [
    ['GET', '/project/file/get?name=..%2Fx', undefined],
    ['POST', '/project/file/delete', { name: '../x' }],
    ['POST', '/project/file/rename', { old_name: 'replications/users.yaml', new_name: '../x' }],
  ] as const) {
    const res = await api.request(method, p, body ? { body } : {});
    assert.deepEqual(res.body, bad('invalid file name "../x": ".." segments are not allowed'), p);
  }
});

test('row 11: a symlink leaving the root is refused', async () => {
  await symlink('/tmp', path.join(api.acme.root, 'link'));
  const res = await api.request('GET', '/project/file/get?name=link%2Fx.txt');
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, bad('invalid file name "link/x.txt": path leaves the project root'));
  const write = await save({ name: 'link/evil.txt', body: 'x' });
  assert.deepEqual(write.body, bad('invalid file name "link/evil.txt": path leaves the project root'));
});

test('row 12: unknown field, body over 1 MiB, wrong content type', async () => {
  const unknown = await save({ name: 'readme.txt', content: 'x' });
  assert.equal(unknown.status, 400);
  assert.deepEqual(unknown.body, bad('unknown field "file.content"'));
  const big = await api.request('POST', '/project/file/save', { raw: Buffer.alloc(1_048_577, 0x20) });
  assert.equal(big.status, 413);
  assert.deepEqual(big.body, { error: 'request body exceeds 1 MiB', code: 'payload_too_large' });
  const text = await api.request('POST', '/project/file/save', { raw: JSON.stringify({ file: { name: 'readme.txt', body: 'x' } }), contentType: 'text/plain' });
  assert.equal(text.status, 400);
  assert.deepEqual(text.body, bad('content type must be application/json'));
  const nested = await save({ name: 'readme.txt', body: 'x', encoding: 'hex' });
  assert.deepEqual(nested.body, bad('field "file.encoding" must be "base64"'));
});

test('get and list: bodies verbatim, base64 for non-UTF-8, directories, prefix and include_body', async () => {
  assert.equal((await save({ name: 'docs/readme.md', body: 'hello ${NAME}\n', updated: 'ignored', size: 99 })).status, 200);
  const bin = Buffer.from([0x50, 0x41, 0x52, 0x31, 0xff, 0x00]);
  assert.equal((await save({ name: 'seeds/data.parquet', body: bin.toString('base64'), encoding: 'base64' })).body.file.size, 6);
  const got = await api.request('GET', '/project/file/get?name=docs%2Freadme.md');
  assert.deepEqual(got.body, { name: 'docs/readme.md', body: 'hello ${NAME}\n', is_dir: false, updated: got.body.updated, size: 14 });
  const parquet = await api.request('GET', '/project/file/get?name=seeds/data.parquet');
  assert.equal(parquet.body.encoding, 'base64');
  assert.deepEqual(Buffer.from(parquet.body.body, 'base64'), bin);
  const dir = await api.request('GET', '/project/file/get?name=docs');
  assert.deepEqual(dir.body, { name: 'docs', body: '', is_dir: true, updated: dir.body.updated, size: 0 });
  const missing = await api.request('GET', '/project/file/get');
  assert.deepEqual(missing.body, bad('query parameter "name" is required'));

  const listed = await api.request('POST', '/project/file/list', { body: { prefix: 'docs/' } });
  assert.deepEqual(listed.body, { files: [{ name: 'docs/readme.md', is_dir: false, updated: got.body.updated, size: 14 }] });
  const withBody = await api.request('POST', '/project/file/list', { body: { prefix: 'docs', include_body: true } });
  assert.deepEqual(withBody.body.files.map((f: { name: string; body: string }) => [f.name, f.body]), [['docs', ''], ['docs/readme.md', 'hello ${NAME}\n']]);
  const dotdot = await api.request('POST', '/project/file/list', { body: { prefix: '../' } });
  assert.equal(dotdot.status, 400);
});

test('save errors: is_dir with a body, bad base64, a directory in the way, a file as parent', async () => {
  assert.deepEqual((await save({ name: 'dir1', is_dir: true, body: 'x' })).body, bad('body must be empty when is_dir is true'));
  assert.deepEqual((await save({ name: 'b.bin', body: '@@@', encoding: 'base64' })).body, bad('body must be valid base64'));
  assert.equal((await save({ name: 'dir1/sub', is_dir: true })).status, 200);
  const onDir = await save({ name: 'dir1/sub', body: 'x' });
  assert.equal(onDir.status, 409);
  assert.deepEqual(onDir.body, { error: '"dir1/sub" is a directory', code: 'conflict' });
  await save({ name: 'plain.txt', body: 'x' });
  const under = await save({ name: 'plain.txt/x.txt', body: 'x' });
  assert.deepEqual(under.body, { error: '"plain.txt" is not a directory', code: 'conflict' });
});

test('query files: a connection header makes a job file; without it a .sql file is plain', async () => {
  const q = await save({ name: 'queries/refresh.sql', body: '-- connection: WAREHOUSE\n-- Rebuild.\ncreate or replace view v as select 1;\n' });
  assert.equal(q.body.job_file_kind, 'query');
  const [job] = await jobsOf({ file_name: 'queries/refresh.sql' });
  assert.deepEqual([job.id, job.name, job.type, job.default], [q.body.default_job_id, 'refresh', 'query', true]);
  const model = await save({ name: 'models/orders.sql', body: "select * from {{ ref('stg') }}\n" });
  assert.deepEqual(Object.keys(model.body), ['file']);
  const empty = await save({ name: 'queries/empty.sql', body: '-- connection: WAREHOUSE\n-- nothing\n' });
  assert.equal(empty.status, 422);
  assert.deepEqual(empty.body.problems, [{ path: '', message: 'query file has no SQL statements' }]);
  const onFile = await save({ name: 'queries/lake.sql', body: '-- connection: EXPORTS\nselect 1\n' });
  assert.equal(onFile.status, 200, 'EXPORTS is not defined in this fixture: its kind is checked when a run starts');
});

test('kind changes: the default job follows or goes; other jobs referencing the file make it 409', async () => {
  const first = await save({ name: 'k/a.yaml', body: U });
  const dflt = first.body.default_job_id;
  // replication → monitor: the default job's type follows.
  const monitor = await save({ name: 'k/a.yaml', body: 'connection: WAREHOUSE\nobjects:\n  public.users:\n' });
  assert.equal(monitor.status, 200);
  assert.equal(monitor.body.job_file_kind, 'monitor');
  assert.equal(monitor.body.default_job_id, undefined);
  const after = await api.request('GET', `/project/job/get?job_id=${dflt}`);
  assert.deepEqual([after.body.type, after.body.default, after.body.name], ['monitor', true, 'a']);
  // A job of the user's own on the file blocks a kind change.
  const mine = await saveJob({ name: 'watch users', type: 'monitor', file_name: 'k/a.yaml' });
  const blocked = await save({ name: 'k/a.yaml', body: 'just text: true\n' });
  assert.equal(blocked.status, 409);
  assert.deepEqual(blocked.body, { error: `file "k/a.yaml" is referenced by jobs ${mine.id}; its kind cannot change from monitor to plain file`, code: 'conflict' });
  // The refused content was written beside the file before the check (ProjectTree.stage); it is gone again.
  assert.deepEqual(await readdir(path.join(api.acme.root, 'k')), ['a.yaml']);
  assert.equal((await api.request('GET', '/project/file/get?name=k/a.yaml')).body.body, 'connection: WAREHOUSE\nobjects:\n  public.users:\n');
  // The same kind is fine.
  assert.equal((await save({ name: 'k/a.yaml', body: 'connection: WAREHOUSE\nobjects:\n  public.orders:\n' })).status, 200);
  assert.equal((await api.request('POST', '/project/job/delete', { body: { job_id: mine.id } })).status, 200);
  // job file → plain: the default job is deleted.
  const plain = await save({ name: 'k/a.yaml', body: 'just text: true\n' });
  assert.deepEqual(Object.keys(plain.body), ['file']);
  const gone = await api.request('GET', `/project/job/get?job_id=${dflt}`);
  assert.equal(gone.status, 404);
  // plain → job file: a new default job.
  const again = await save({ name: 'k/a.yaml', body: U });
  assert.match(again.body.default_job_id, JOB_ID);
  assert.notEqual(again.body.default_job_id, dflt);
});

test('delete: default jobs go with their file; other jobs and active executions make it 409', async () => {
  const a = await save({ name: 'del/a.yaml', body: U });
  const b = await save({ name: 'del/sub/b.sql', body: '-- connection: LAKE\nselect 1\n' });
  await save({ name: 'del/sub/notes.txt', body: 'n' });
  const mine = await saveJob({ name: 'mine', type: 'query', file_name: 'del/sub/b.sql' });
  const refused = await api.request('POST', '/project/file/delete', { body: { name: 'del' } });
  assert.equal(refused.status, 409);
  assert.deepEqual(refused.body, { error: `file "del" is referenced by jobs ${mine.id}`, code: 'conflict' });
  await api.request('POST', '/project/job/delete', { body: { job_id: mine.id } });

  const job = await api.store.getJob(api.acme.id, a.body.default_job_id);
  const exec = await api.store.createExecution({ project_id: api.acme.id, job_id: job!.id, job_name: job!.name, job_type: job!.type, file_name: job!.file_name, trigger: 'api', start_time: new Date().toISOString() });
  const active = await api.request('POST', '/project/file/delete', { body: { name: 'del/a.yaml' } });
  assert.deepEqual(active.body, { error: `job ${job!.id} has active executions`, code: 'conflict' });
  await api.store.updateExecution(exec.exec_id, { status: 'cancelled', end_time: new Date().toISOString() });

  const res = await api.request('POST', '/project/file/delete', { body: { name: 'del' } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { name: 'del', deleted: true, deleted_job_ids: [a.body.default_job_id, b.body.default_job_id] });
  assert.equal((await jobsOf({ file_name: 'del/a.yaml' })).length, 0);
  assert.equal((await api.request('GET', '/project/file/get?name=del')).status, 404);
  // The execution survives its job.
  const list = await api.request('GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: exec.exec_id }))}`);
  assert.equal(list.body.executions[0].job_id, job!.id);
  const missing = await api.request('POST', '/project/file/delete', { body: { name: 'del' } });
  assert.deepEqual(missing.body, { error: 'file "del" not found', code: 'not_found' });
});

test('rename: jobs follow the file, a default job takes the new stem; directory moves carry their jobs', async () => {
  const a = await save({ name: 'ren/users.yaml', body: U });
  const mine = await saveJob({ name: 'users nightly', type: 'replication', file_name: 'ren/users.yaml' });
  const res = await api.request('POST', '/project/file/rename', { body: { old_name: 'ren/users.yaml', new_name: 'ren/crm/crm_users.yml' } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { file: { name: 'ren/crm/crm_users.yml', is_dir: false, updated: res.body.file.updated, size: 132 }, updated_job_ids: [a.body.default_job_id, mine.id] });
  const moved = await jobsOf({ file_name: 'ren/crm/crm_users.yml' });
  assert.deepEqual(moved.map((j) => [j.id, j.name]), [[a.body.default_job_id, 'crm_users'], [mine.id, 'users nightly']]);

  const dir = await api.request('POST', '/project/file/rename', { body: { old_name: 'ren/crm', new_name: 'moved' } });
  assert.deepEqual(dir.body.updated_job_ids, [a.body.default_job_id, mine.id]);
  assert.equal(dir.body.file.is_dir, true);
  assert.deepEqual((await jobsOf({ file_name: 'moved/crm_users.yml' })).map((j) => j.id), [a.body.default_job_id, mine.id]);
});

test('rename errors: into itself, missing source, taken target, a kind change of a referenced file', async () => {
  await save({ name: 'rn/q.sql', body: '-- connection: LAKE\nselect 1\n' });
  await save({ name: 'rn/other.txt', body: 'x' });
  const r = (old_name: string, new_name: string) => api.request('POST', '/project/file/rename', { body: { old_name, new_name } });
  assert.deepEqual((await r('rn', 'rn/inner')).body, bad('cannot move "rn" into itself'));
  assert.deepEqual((await r('gone', 'gone/inner')).body, bad('cannot move "gone" into itself'), '400 rules before 404');
  assert.deepEqual((await r('rn/nope.sql', 'rn/x.sql')).body, { error: 'file "rn/nope.sql" not found', code: 'not_found' });
  assert.deepEqual((await r('rn/q.sql', 'rn/other.txt')).body, { error: 'file "rn/other.txt" already exists', code: 'conflict' });
  const [job] = await jobsOf({ file_name: 'rn/q.sql' });
  const kind = await r('rn/q.sql', 'rn/q.txt');
  assert.equal(kind.status, 409);
  assert.deepEqual(kind.body, { error: `file "rn/q.sql" is referenced by jobs ${job.id}; its kind cannot change from query to plain file`, code: 'conflict' });
  // A plain file that becomes a valid job file by its new name gets a default job.
  await save({ name: 'rn/draft.txt', body: '-- connection: LAKE\nselect 2\n' });
  assert.equal((await r('rn/draft.txt', 'rn/draft.sql')).status, 200);
  const [created] = await jobsOf({ file_name: 'rn/draft.sql' });
  assert.deepEqual([created.name, created.type, created.default], ['draft', 'query', true]);
});

test('isolation: another project\'s files are 404 exactly like missing ones, and its lists are its own', async () => {
  const get = await api.request('GET', '/project/file/get?name=replications%2Fusers.yaml', { token: api.beta.token });
  assert.equal(get.status, 404);
  assert.deepEqual(get.body, { error: 'file "replications/users.yaml" not found', code: 'not_found' });
  const del = await api.request('POST', '/project/file/delete', { body: { name: 'replications/users.yaml' }, token: api.beta.token });
  assert.deepEqual(del.body, { error: 'file "replications/users.yaml" not found', code: 'not_found' });
  const list = await api.request('POST', '/project/file/list', { body: {}, token: api.beta.token });
  assert.deepEqual(list.body, { files: [] });
  const saved = await save({ name: 'replications/users.yaml', body: U }, api.beta.token);
  assert.match(saved.body.default_job_id, JOB_ID);
  const betaJobs = await api.request('POST', '/project/job/list', { body: {}, token: api.beta.token });
  assert.deepEqual(betaJobs.body.jobs.map((j: { id: string }) => j.id), [saved.body.default_job_id]);
  assert.ok(!(await jobsOf()).some((j) => j.id === saved.body.default_job_id));
});
