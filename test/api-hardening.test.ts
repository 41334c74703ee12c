/**
 * Faults an outside campaign found on the request path, each reproduced against a real daemon app over real sockets:
 * pathological templates, deep JSON, objects that cannot be printed, oversized
 * chunked bodies, HTTP parser errors, reserved file names, deep YAML.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { templateParts } from '../engine/jobs/template.js';
import { startApiServer, type ApiServer } from './helpers/api-server.js';

let api: ApiServer;
before(async () => {
  api = await startApiServer();
});
after(async () => {
  await api.close();
});

/** One raw HTTP exchange; resolves with the whole response text once the server closes or `ms` pass. */
function rawExchange(url: string, request: string | Buffer, ms = 5000): Promise<{ text: string; reset: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let reset = false;
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (b) => (text += b.toString('latin1')));
    socket.on('error', () => (reset = true));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, reset });
    });
    socket.write(request);
  });
}

const jsonBody = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('1: templates scan in linear time; large job files are validated off the event loop', () => {
  test('200,000 unclosed braces and 40,000 "{state." split in well under the test timeout', { timeout: 20_000 }, () => {
    // The old scan re-read the rest of the text for every unclosed `{`: ~100 s for this input.
    assert.deepEqual(templateParts('{'.repeat(200_000)), [{ kind: 'text', text: '{'.repeat(200_000) }]);
    assert.equal(templateParts('"{state.'.repeat(40_000)).length, 1);
    assert.deepEqual(templateParts("{'{'".repeat(50_000)).length, 1);
    assert.deepEqual(
      templateParts("a {state.x} b {coalesce(y, '}')} ${HOME}").map((p) => (p.kind === 'expr' ? p.source : p.text)),
      ['a ', 'state.x', ' b ', "coalesce(y, '}')", ' ${HOME}'],
    );
  });

  test('a pipeline of 60,000 braces saves; an over-long expression is a 422 problem', async () => {
    const braces = await api.request('POST', '/project/file/save', { body: { file: { name: 'braces.yaml', body: `steps:\n  - log: "${'{'.repeat(60_000)}"\n` } } });
    assert.equal(braces.status, 200, JSON.stringify(braces.body).slice(0, 300));
    const long = await api.request('POST', '/project/file/save', { body: { file: { name: 'long.yaml', body: `steps:\n  - log: "{state.${'x'.repeat(5000)}}"\n` } } });
    assert.equal(long.status, 422);
    assert.equal(long.body.problems[0].message, 'expression is 5006 characters long; the limit is 4096');
    assert.equal(long.body.problems[0].line, 2);
  });

  test('a 400 KB job file is validated on a worker thread with the same result as in-thread', async () => {
    const steps = Array.from({ length: 12_000 }, (_, i) => `  - log: "line ${i} {state.missing.x}"`).join('\n');
    const body = `steps:\n${steps}\n  - bogus: 1\n`;
    assert.ok(body.length > 400_000);
    const res = await api.request('POST', '/project/file/save', { body: { file: { name: 'big.yaml', body } } });
    assert.equal(res.status, 422);
    assert.ok(api.offThreadValidations.includes('big.yaml'), 'validated on the pool');
    assert.deepEqual(
      res.body.problems.map((p: { path: string; line: number }) => [p.path, p.line]),
      [['steps[12000]', 12_002]],
    );
    // A valid large file: its save, a job save naming it and a run request all validate it off the event loop.
    const valid = `steps:\n${Array.from({ length: 3000 }, (_, i) => `  - log: "line ${i} of a long pipeline"`).join('\n')}\n`;
    const saved = await api.request('POST', '/project/file/save', { body: { file: { name: 'big-ok.yaml', body: valid } } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body).slice(0, 300));
    const job = (await api.request('GET', `/project/job/get?job_id=${saved.body.default_job_id}`)).body;
    assert.equal((await api.request('POST', '/project/job/save', { body: { job: { ...job, description: 'long' } } })).status, 200);
    const run = await api.request('POST', '/project/job/run', { body: { job_id: job.id } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    await api.request('POST', '/execution/cancel', { body: { exec_id: run.body.exec_id } });
    assert.equal(api.offThreadValidations.filter((n) => n === 'big-ok.yaml').length, 3, 'save, job save and run');
    const small = await api.request('POST', '/project/file/save', { body: { file: { name: 'small.yaml', body: 'steps:\n  - log: hi\n' } } });
    assert.equal(small.status, 200);
    assert.ok(!api.offThreadValidations.includes('small.yaml'), 'small files stay in-thread');
  });
});

describe('2, 3: bodies that broke the validator answer 400 naming the problem', () => {
  test('vars nested 3,000 deep and file/list with 20,000 nested arrays: 400 "nested too deeply"', async () => {
    const deep = '{"job_id":"job_x","vars":' + '{"a":'.repeat(3000) + '1' + '}'.repeat(3000) + '}';
    const run = await api.request('POST', '/project/job/run', { raw: deep });
    assert.equal(run.status, 400);
    assert.deepEqual(run.body, { error: 'request body is nested too deeply (more than 64 levels of arrays and objects)', code: 'bad_request' });
    const list = await api.request('POST', '/project/file/list', { raw: '{"prefix":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}' });
    assert.equal(list.status, 400);
    assert.equal(list.body.code, 'bad_request');
    assert.match(list.body.error, /nested too deeply/);
    const ok = await api.request('POST', '/project/file/list', { body: { prefix: '' } });
    assert.equal(ok.status, 200);
  });

  test('objects with a non-function toString/valueOf in typed fields: 400 with the usual message', async () => {
    const cases: [string, unknown, string][] = [
      ['/connection/test', { name: { toString: 'x' } }, 'field "name" must be a string'],
      ['/project/file/save', { file: { name: { valueOf: 1 }, body: '' } }, 'field "file.name" must be a string'],
      ['/project/file/list', { prefix: { toString: 'x', valueOf: 'y' } }, 'field "prefix" must be a string'],
      ['/project/job/run', { job_id: 'job_x', select: [{ toString: 'x' }] }, 'field "select" must be an array of strings'],
    ];
    for (const [route, body, error] of cases) {
      const res = await api.request('POST', route, { body });
      assert.equal(res.status, 400, `${route}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { error, code: 'bad_request' }, route);
    }
    // In a free-form map such keys are plain data.
    const vars = await api.request('POST', '/project/job/run', { body: { job_id: 'job_nope', vars: { toString: 'x' } } });
    assert.equal(vars.status, 404);
  });
});

describe('4, 5: oversized and malformed requests get a JSON answer, not a reset', () => {
  test('a chunked body over 1 MiB: 413 {error, code} with Connection: close', async () => {
    const chunk = 'a'.repeat(64 * 1024);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const head = `POST /project/file/save HTTP/1.1\r\nHost: x\r\nAuthorization: Service-Project-Token ${api.acme.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const r = await rawExchange(api.url, head + chunks + '0\r\n\r\n');
    assert.match(r.text, /^HTTP\/1\.1 413 /);
    assert.match(r.text, /\r\nconnection: close\r\n/i);
    assert.deepEqual(jsonBody(r.text), { error: 'request body exceeds 1 MiB', code: 'payload_too_large' });
  });

  test('Content-Length: abc → 400; a URL over 16 KB → 431; garbage → 400; each with {error, code}', async () => {
    const badLength = await rawExchange(api.url, 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    assert.match(badLength.text, /^HTTP\/1\.1 400 /);
    assert.deepEqual(jsonBody(badLength.text), { error: 'invalid Content-Length header', code: 'bad_request' });
    const longUrl = await rawExchange(api.url, `GET /health?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(longUrl.text, /^HTTP\/1\.1 431 /);
    assert.deepEqual(jsonBody(longUrl.text), { error: 'request line and headers exceed 16 KB', code: 'bad_request' });
    const bigHeader = await rawExchange(api.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    assert.match(bigHeader.text, /^HTTP\/1\.1 431 /);
    const garbage = await rawExchange(api.url, 'HELLO\r\n\r\n');
    assert.match(garbage.text, /^HTTP\/1\.1 400 /);
    assert.equal(jsonBody(garbage.text).code, 'bad_request');
    const health = await api.request('GET', '/health', { token: null });
    assert.equal(health.status, 200);
  });
});

describe('8, 9: reserved names and deep YAML', () => {
  test('".git" in any letter case and the staging prefix are refused names; nothing is written', async () => {
    for (const [name, error] of [
      ['.GIT/config', 'invalid file name ".GIT/config": ".git" segments are not allowed'],
      ['sub/.Git/x', 'invalid file name "sub/.Git/x": ".git" segments are not allowed'],
      ['.service-tmp-0123456789abcdef01234567', 'invalid file name ".service-tmp-0123456789abcdef01234567": ".service-tmp-" names are reserved for the service\'s temporary files'],
      ['a/.service-tmp-x.yaml', 'invalid file name "a/.service-tmp-x.yaml": ".service-tmp-" names are reserved for the service\'s temporary files'],
    ]) {
      const res = await api.request('POST', '/project/file/save', { body: { file: { name, body: 'x' } } });
      assert.deepEqual([res.status, res.body], [400, { error, code: 'bad_request' }], name);
    }
    const list = await api.request('POST', '/project/file/list', { body: { prefix: '.' } });
    assert.deepEqual(list.body.files, []);
  });

  test('YAML nested thousands deep: 422 saying the nesting is too deep, with the line', async () => {
    const body = `steps:\n  - log: hi\n    vars: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const res = await api.request('POST', '/project/file/save', { body: { file: { name: 'deep.yaml', body } } });
    assert.equal(res.status, 422);
    const p = res.body.problems.find((x: { message: string }) => /nesting/.test(x.message));
    assert.ok(p, JSON.stringify(res.body));
    assert.equal(p.message, 'YAML nesting is too deep (more than 100 levels of mappings and sequences)');
    assert.equal(p.line, 3);
    assert.ok(!res.body.problems.some((x: { message: string }) => /call stack/.test(x.message)));
  });
});

describe('16: files that look meant as job files but are not say why', () => {
  const save = (name: string, body: string) => api.request('POST', '/project/file/save', { body: { file: { name, body } } });

  test('a .sql file without "-- connection:" outside a build project: saved, with a warning and a log line', async () => {
    const res = await save('queries/orphan.sql', 'select 1;\n');
    assert.equal(res.status, 200);
    assert.equal(res.body.job_file_kind, undefined);
    assert.deepEqual(res.body.warnings, ['queries/orphan.sql was saved as a plain file, not a query job: its header has no "-- connection: NAME" line']);
    assert.ok(api.logs.some((l) => l.startsWith('warn ') && l.includes('queries/orphan.sql was saved as a plain file')), api.logs.join('\n'));
    // A build project's models are not job files, and nobody needs to be told.
    assert.equal((await save('models/service_build.yml', 'target: DK\n')).status, 200);
    const model = await save('models/staging/a.sql', 'select 1 as x\n');
    assert.deepEqual([model.status, model.body.warnings], [200, undefined]);
  });

  test('a monitor file with a misspelt top-level key: saved as plain, the warning names the misspelling', async () => {
    const res = await save('monitors/m.yaml', 'connection: WAREHOUSE\nobject:\n  shop.orders:\n');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.warnings, [
      'monitors/m.yaml was saved as a plain file, not a job file: a pipeline needs a top-level "steps" key, a replication needs a top-level "streams" key, a monitor needs a top-level "objects" key; "object" looks like "objects"',
    ]);
    for (const [name, body] of [['data/list.yaml', '- 1\n- 2\n'], ['data/settings.yaml', 'colour: blue\n']]) {
      const plain = await save(name, body);
      assert.deepEqual([plain.status, plain.body.warnings], [200, undefined], name);
    }
  });
});
