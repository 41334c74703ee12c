/**
 * Requests that used to hold the daemon for seconds, each bounded: bodies of
 * tens of thousands of keys, `vars` maps, YAML alias bombs, job files of
 * tens of megabytes, and large file reads and listings, which are streamed
 * (no Content-Length: the answer is written while it is produced).
 */
import assert from 'node:assert/strict';
import { mkdir, truncate, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fixtureEnv, startApiServer, type ApiServer } from './helpers/api-server.js';

let api: ApiServer;
let jobId: string;
before(async () => {
  api = await startApiServer({ acmeEnv: fixtureEnv() });
  const saved = await api.request('POST', '/project/file/save', { body: { file: { name: 'r.yaml', body: 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n' } } });
  jobId = saved.body.default_job_id;
});
after(async () => {
  await api.close();
});

/** The raw answer: status, headers and body bytes as they came over the socket. */
function raw(method: string, pathAndQuery: string, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Service-Project-Token ${api.acme.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = httpRequest(api.url + pathAndQuery, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a body of 40,000 keys is refused with 413 naming the limit', async () => {
  const body: Record<string, number> = {};
  for (let i = 0; i < 40_000; i++) body[`k${i}`] = i;
  for (const route of ['/project/file/save', '/project/job/run', '/project/job/save']) {
    const res = await api.request('POST', route, { body });
    assert.equal(res.status, 413, route);
    assert.deepEqual(res.body, { error: 'request body has more than 10000 fields (object keys and array elements, all levels)', code: 'payload_too_large' });
  }
  // Under the cap the first problem still answers, as before.
  const few = await api.request('POST', '/project/file/save', { body: { file: { name: 'a.txt' }, zz: 1, ...Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])) } });
  assert.deepEqual(few.body, { error: 'unknown field "zz"', code: 'bad_request' });
});

test('vars maps hold at most 1,000 entries, on a run and on a job save', async () => {
  const vars = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`v${i}`, i]));
  const run = await api.request('POST', '/project/job/run', { body: { job_id: jobId, vars } });
  assert.deepEqual([run.status, run.body], [400, { error: 'field "vars" must have at most 1000 entries', code: 'bad_request' }]);
  const save = await api.request('POST', '/project/job/save', { body: { job: { name: 'n', type: 'replication', file_name: 'r.yaml', config: { vars } } } });
  assert.deepEqual([save.status, save.body], [400, { error: 'field "job.config.vars" must have at most 1000 entries', code: 'bad_request' }]);
  const ok = await api.request('POST', '/project/job/run', { body: { job_id: jobId, vars: Object.fromEntries(Object.entries(vars).slice(0, 1000)) } });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
});

test('a YAML alias bomb is refused at 10,000 expanded nodes', async () => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
  const res = await api.request('POST', '/project/file/save', { body: { file: { name: 'bomb.yaml', body: `steps:\n  - log: hi\nenv:\n  ${lines.join('\n  ')}\n` } } });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body.problems[0], { path: '', message: 'YAML aliases add more than 10000 nodes (the limit for alias expansion)', line: 1, column: 1 });
});

test('a job file over 1 MiB is refused by job save (422) and job run (409) without being parsed', async () => {
  const big = path.join(api.acme.root, 'big.yaml');
  // A valid replication header, then 55 MB of nothing: the size alone refuses it.
  await writeFile(big, 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n');
  await truncate(big, 55_000_000);
  const save = await api.request('POST', '/project/job/save', { body: { job: { name: 'big', type: 'replication', file_name: 'big.yaml' } } });
  assert.equal(save.status, 422);
  assert.deepEqual(save.body, {
    error: 'invalid job file big.yaml',
    code: 'invalid_job_file',
    problems: [{ path: '', message: 'job file is 55000000 bytes; job files are limited to 1048576 bytes (1 MiB)' }],
  });
  // A job file that grew past the limit after its job was saved: its runs are refused.
  const small = path.join(api.acme.root, 'grows.yaml');
  await writeFile(small, 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n');
  const job = await api.request('POST', '/project/job/save', { body: { job: { name: 'grows', type: 'replication', file_name: 'grows.yaml' } } });
  assert.equal(job.status, 200, JSON.stringify(job.body));
  await truncate(small, 2 * 1024 * 1024);
  const run = await api.request('POST', '/project/job/run', { body: { job_id: job.body.id } });
  assert.deepEqual([run.status, run.body], [409, { error: 'job file "grows.yaml" is invalid', code: 'conflict' }]);
});

test('file get streams a file over 1 MiB: UTF-8 text split anywhere and binary content arrive intact', async () => {
  const text = 'é€😀 line\n'.repeat(200_000); // multi-byte characters across every read boundary
  await writeFile(path.join(api.acme.root, 'big.txt'), text);
  const binary = Buffer.alloc(3 * 1024 * 1024 + 1, 0);
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919) & 0xff;
  binary[0] = 0xff; // never valid UTF-8
  await writeFile(path.join(api.acme.root, 'big.bin'), binary);
  const t = await raw('GET', '/project/file/get?name=big.txt');
  assert.equal(t.status, 200);
  assert.equal(t.headers['content-length'], undefined, 'streamed, not built whole');
  assert.equal(t.headers['content-type'], 'application/json; charset=utf-8');
  const tf = JSON.parse(t.body.toString('utf8'));
  assert.equal(tf.body, text);
  assert.deepEqual([tf.name, tf.is_dir, tf.size, tf.encoding], ['big.txt', false, Buffer.byteLength(text), undefined]);
  const b = await raw('GET', '/project/file/get?name=big.bin');
  const bf = JSON.parse(b.body.toString('utf8'));
  assert.equal(bf.encoding, 'base64');
  assert.ok(Buffer.from(bf.body, 'base64').equals(binary));
  assert.equal(bf.size, binary.length);
  // The small-file answer is unchanged.
  const small = await api.request('GET', '/project/file/get?name=r.yaml');
  assert.equal(small.status, 200);
  assert.match(small.body.body, /^source: WAREHOUSE/);
  assert.equal((await api.request('GET', '/project/file/get?name=nope.bin')).status, 404);
});

test('file list of 2,500 entries is streamed in slices, sorted and complete', async () => {
  const dir = path.join(api.acme.root, 'many');
  await mkdir(dir, { recursive: true });
  await Promise.all(Array.from({ length: 2500 }, (_, i) => writeFile(path.join(dir, `f${String(i).padStart(4, '0')}.txt`), 'x')));
  const res = await raw('POST', '/project/file/list', JSON.stringify({ prefix: 'many/' }));
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-length'], undefined, 'streamed, not built whole');
  const files = JSON.parse(res.body.toString('utf8')).files as { name: string; size: number }[];
  assert.equal(files.length, 2500);
  assert.deepEqual(files.slice(0, 2).map((f) => f.name), ['many/f0000.txt', 'many/f0001.txt']);
  assert.equal(files.at(-1)!.name, 'many/f2499.txt');
  assert.ok(files.every((f) => f.size === 1));
});
