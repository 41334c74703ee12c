// The daemon's HTTP API through the Koa app (conventions, /health to /project/get, the acceptance rows
// 1–5 and 29): public routes, authentication, routing, body and query
// validation, connections, the project resource, and project isolation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { API_VERSION, fixtureEnv, fixtureHostEnv, startApiServer, U, type ApiServer } from './helpers/api-server.js';

let api: ApiServer;
const UNAUTHORIZED = { error: 'missing or invalid project token', code: 'unauthorized' };

before(async () => {
  api = await startApiServer({ acmeEnv: fixtureEnv() });
  const exportsDir = path.join(api.base, 'exports');
  await mkdir(exportsDir);
  await writeFile(path.join(api.base, 'home', 'env.yaml'), fixtureHostEnv(exportsDir));
});

after(async () => {
  await api.close();
});

test('row 1: GET /health needs no token and names the version', async () => {
  const res = await api.request('GET', '/health', { token: null });
  assert.equal(res.status, 200);
  assert.deepEqual({ status: res.body.status, version: res.body.version }, { status: 'ok', version: API_VERSION });
  assert.equal(res.body.store.reachable, true, 'and the state store answered a read');
  assert.equal(typeof res.body.store.latency_ms, 'number');
  assert.match(res.body.version, /^\d+\.\d+\.\d+/);
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

const AUTHENTICATED_PATHS = [
  '/connection/list', '/connection/test', '/project/get', '/project/file/get', '/project/file/list', '/project/file/save',
  '/project/file/delete', '/project/file/rename', '/project/job/list', '/project/job/get', '/project/job/save',
  '/project/job/delete', '/project/job/run', '/execution/list', '/execution/cancel', '/execution/replication-tasks',
  '/execution/pipeline-steps', '/project/git/pull',
];

test('row 2: GET /openapi.json is OpenAPI 3.1 with the authenticated paths and strict request schemas', async () => {
  const res = await api.request('GET', '/openapi.json', { token: null });
  assert.equal(res.status, 200);
  const doc = res.body;
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.title, 'service project API');
  assert.deepEqual(doc.components.securitySchemes.projectToken, { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Service-Project-Token <token>' });
  assert.equal(AUTHENTICATED_PATHS.length, 18);
  assert.deepEqual(AUTHENTICATED_PATHS.filter((p) => !(p in doc.paths)), []);
  for (const p of AUTHENTICATED_PATHS) assert.deepEqual(Object.values(doc.paths[p]).map((op: any) => op.security), [[{ projectToken: [] }]], p);
  assert.deepEqual(Object.keys(doc.paths).sort(), [...AUTHENTICATED_PATHS, '/health', '/openapi.json'].sort());
  assert.deepEqual(doc.paths['/project/git/pull'].post.requestBody.content['application/json'].schema, { type: 'object', properties: {}, additionalProperties: false });
  const save = doc.paths['/project/file/save'].post.requestBody.content['application/json'].schema;
  assert.equal(save.additionalProperties, false);
  assert.equal(save.properties.file.additionalProperties, false);
  assert.deepEqual(save.properties.file.required, ['name']);
  const job = doc.paths['/project/job/save'].post.requestBody.content['application/json'].schema.properties.job;
  assert.equal(job.properties.config.properties.vars.additionalProperties, true, 'vars is a free-form map');
  assert.deepEqual(doc.paths['/execution/list'].get.parameters.map((p: { name: string }) => p.name), ['status', 'limit', 'filters', 'order']);
  assert.deepEqual(doc.paths['/project/job/get'].get.security, [{ projectToken: [] }]);
  // Public routes declare no security; every operation has an id and documents its 4xx answers.
  assert.deepEqual(doc.paths['/health'].get.security, []);
  assert.deepEqual(doc.paths['/openapi.json'].get.security, []);
  const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p)) as any[];
  assert.equal(new Set(ops.map((o) => o.operationId)).size, ops.length);
  for (const o of ops) assert.ok(Object.keys(o.responses).some((s) => /^4\d\d$/.test(s)), o.operationId);
  assert.equal(doc.paths['/project/file/save'].post.requestBody.required, true);
  assert.equal(doc.paths['/project/file/list'].post.requestBody.required, false);
  assert.equal(doc.paths['/project/file/save'].post.responses['422'].content['application/json'].schema.$ref, '#/components/schemas/Error');
});

test('row 3: no header, another scheme, an unknown token and a malformed token are the same 401', async () => {
  const cases: { authorization?: string; token?: null }[] = [
    { token: null },
    { authorization: `Bearer ${api.acme.token}` },
    { authorization: 'Service-Project-Token c9d488b1-cfbf-4360-9cfc-865239194242' },
    { authorization: 'Service-Project-Token not-a-token' },
    { authorization: `Service-Project-Token  ${api.acme.token}` },
    { authorization: `Service-Project-Token ${api.acme.token.toUpperCase()}` },
  ];
  for (const c of cases) {
    const res = await api.request('GET', '/connection/list', c);
    assert.equal(res.status, 401, JSON.stringify(c));
    assert.deepEqual(res.body, UNAUTHORIZED);
  }
  // The scheme word is case-insensitive.
  const ok = await api.request('GET', '/connection/list', { authorization: `service-project-token ${api.acme.token}` });
  assert.equal(ok.status, 200);
});

test('authentication comes before routing: an unknown route without a token is 401', async () => {
  const res = await api.request('GET', '/project/files', { token: null });
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, UNAUTHORIZED);
});

test('row 4: GET /connection/list lists project, host sources sorted by name, nothing else', async () => {
  const res = await api.request('GET', '/connection/list');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    connections: [
      { name: 'BROKEN', type: 'postgres', kind: 'database', source: 'project' },
      { name: 'EXPORTS', type: 'file', kind: 'file', source: 'host' },
      { name: 'LAKE', type: 'duckdb', kind: 'database', source: 'project' },
      { name: 'WAREHOUSE', type: 'postgres', kind: 'database', source: 'project' },
    ],
  });
  // beta's env file is empty: it sees only the host connection.
  const beta = await api.request('GET', '/connection/list', { token: api.beta.token });
  assert.deepEqual(beta.body, { connections: [{ name: 'EXPORTS', type: 'file', kind: 'file', source: 'host' }] });
});

test('row 5: testing BROKEN is a 200 with valid false and no secret; NOPE is 404; EXPORTS lists its folder', async () => {
  const started = Date.now();
  const broken = await api.request('POST', '/connection/test', { body: { name: 'BROKEN' } });
  assert.ok(Date.now() - started < 11_000);
  assert.equal(broken.status, 200);
  assert.equal(broken.body.valid, false);
  assert.match(broken.body.error, /^could not connect to BROKEN: /);
  assert.ok(!broken.body.error.includes('s3cret-pw'));
  const nope = await api.request('POST', '/connection/test', { body: { name: 'NOPE' } });
  assert.equal(nope.status, 404);
  assert.deepEqual(nope.body, { error: 'connection NOPE not found', code: 'not_found' });
  const exportsConn = await api.request('POST', '/connection/test', { body: { name: 'exports' } });
  assert.deepEqual(exportsConn.body, { valid: true });
  // A DuckDB file is tested on its actor's thread, the daemon's one owner of the file.
  const lake = await api.request('POST', '/connection/test', { body: { name: 'LAKE' } });
  assert.deepEqual(lake.body, { valid: true });
});

test('row 29: unknown paths are 404 "no route for <METHOD> <path>", also a known path with the wrong method, another case or a trailing slash', async () => {
  for (const [method, p] of [['GET', '/project/files'], ['GET', '/project/file/list'], ['POST', '/project/file/get'], ['GET', '/project/job/save/'], ['GET', '/Project/get'], ['GET', '/health/'], ['POST', '/health']] as const) {
    const res = await api.request(method, p);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: `no route for ${method} ${p}`, code: 'not_found' });
  }
});

test('request bodies: JSON syntax, non-object, content type, missing and mistyped fields, null as absent', async () => {
  const bad = async (o: Parameters<ApiServer['request']>[2], error: string) => {
    const res = await api.request('POST', '/project/file/delete', o);
    assert.equal(res.status, 400, error);
    assert.deepEqual(res.body, { error, code: 'bad_request' });
  };
  await bad({ raw: '{"name":' }, 'request body is not valid JSON');
  await bad({ raw: '["x"]' }, 'request body must be a JSON object');
  await bad({ raw: '{"name":"x"}', contentType: 'text/plain' }, 'content type must be application/json');
  await bad({ body: {} }, 'field "name" is required');
  await bad({ body: { name: 7 } }, 'field "name" must be a string');
  await bad({ body: { name: 'x', force: true } }, 'unknown field "force"');
  // An empty body is {} and a charset parameter is fine.
  const empty = await api.request('POST', '/project/file/list', { raw: '' });
  assert.deepEqual(empty.body, { files: [] });
  const charset = await api.request('POST', '/project/file/list', { raw: '{"prefix":null}', contentType: 'application/json; charset=utf-8' });
  assert.deepEqual(charset.body, { files: [] });
});

test('a query parameter given twice is 400; unknown ones are ignored', async () => {
  const twice = await api.request('GET', '/project/file/get?name=a.txt&name=b.txt');
  assert.equal(twice.status, 400);
  assert.deepEqual(twice.body, { error: 'query parameter "name" given more than once', code: 'bad_request' });
  const limit = await api.request('GET', '/execution/list?limit=1&limit=2');
  assert.deepEqual(limit.body, { error: 'query parameter "limit" given more than once', code: 'bad_request' });
  const missing = await api.request('GET', '/project/job/get?id=job_x');
  assert.deepEqual(missing.body, { error: 'query parameter "job_id" is required', code: 'bad_request' });
  const ignored = await api.request('GET', '/execution/list?page=2&page=3');
  assert.deepEqual(ignored.body, { executions: [] });
});

test('GET /project/get: the token\'s project with counts; git credentials redacted', async () => {
  const before = await api.request('GET', '/project/get');
  assert.equal(before.status, 200);
  assert.deepEqual(before.body, { id: api.acme.id, name: 'acme', git: null, counts: { files: 0, jobs: 0, executions: 0 } });
  await api.request('POST', '/project/file/save', { body: { file: { name: 'replications/users.yaml', body: U } } });
  await api.request('POST', '/project/file/save', { body: { file: { name: 'notes', is_dir: true } } });
  const after = await api.request('GET', '/project/get');
  assert.deepEqual(after.body.counts, { files: 1, jobs: 1, executions: 0 });

  await api.store.updateProjectGit(api.beta.id, { url: 'https://loader:ghp_secret@git.example.com/beta/data.git', enabled: false, poll_interval: 0 });
  const beta = await api.request('GET', '/project/get', { token: api.beta.token });
  assert.deepEqual(beta.body, {
    id: api.beta.id,
    name: 'beta',
    git: { url: 'https://***@git.example.com/beta/data.git', branch: 'main', enabled: false, poll_interval: 0, last_sha: null, last_pull: null, last_error: null },
    counts: { files: 0, jobs: 0, executions: 0 },
  });
});
