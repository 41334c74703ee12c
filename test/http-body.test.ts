/**
 * The one body reader (koa-body under http/body.ts) on a bare Koa app over
 * real sockets: what the console's forms and the API's JSON bodies read,
 * and each failure as the contract words it — sizes, types, encodings, a
 * body sent without a type, an upload cut short.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import { readForm, readJsonBody } from '../http/body.js';
import { toHttpError } from '../http/http-error.js';
import { waitFor } from './helpers/within.js';

let server: Server;
let base: string;
/** Every failure a reader threw, in order. */
const failures: unknown[] = [];

before(async () => {
  const app = new Koa();
  app.use(async (ctx) => {
    try {
      const body = ctx.path === '/form' ? Object.fromEntries(await readForm(ctx)) : await readJsonBody(ctx);
      ctx.body = { body, own: Object.keys(body) };
    } catch (err) {
      failures.push(err);
      const e = toHttpError(err);
      ctx.status = e.status;
      ctx.body = { error: e.message, code: e.code };
      if (e.options.closeConnection) ctx.set('Connection', 'close');
    }
  });
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function post(path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { method: 'POST', headers, body });
  return { status: res.status, connection: res.headers.get('connection'), body: (await res.json()) as Record<string, unknown> };
}

/** A chunked body: no Content-Length, so only the bytes read can trip the limit. */
function chunked(size: number): ReadableStream<Uint8Array> {
  let left = size;
  return new ReadableStream({
    pull(c) {
      const n = Math.min(left, 64 * 1024);
      left -= n;
      if (n > 0) c.enqueue(new Uint8Array(n).fill(0x61));
      else c.close();
    },
  });
}

test('forms: flat names as the browser sends them, the first of repeated names; an empty body is an empty form', async () => {
  const form = await post('/form', 'a=1&a=2&b%5Bc%5D=3&d.e=4&f=x+y%26z&g', { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' });
  assert.deepEqual(form, { status: 200, connection: 'keep-alive', body: { body: { a: '1', 'b[c]': '3', 'd.e': '4', f: 'x y&z', g: '' }, own: ['a', 'b[c]', 'd.e', 'f', 'g'] } });
  const empty = await post('/form', '', { 'content-type': 'application/json' });
  assert.deepEqual(empty.body, { body: {}, own: [] });
});

test('forms: another type is 415, over 4 MiB is 413 whether declared or streamed, and the connection closes', async () => {
  const json = await post('/form', '{"a":1}', { 'content-type': 'application/json' });
  assert.deepEqual([json.status, json.body], [415, { error: 'forms must be sent as application/x-www-form-urlencoded', code: 'bad_request' }]);
  const untyped = await post('/form', Buffer.from('a=1'));
  assert.equal(untyped.status, 415);
  const tooBig = { error: 'form exceeds 4 MiB', code: 'payload_too_large' };
  const declared = await post('/form', 'a='.padEnd(4 * 1024 * 1024 + 1, 'x'), { 'content-type': 'application/x-www-form-urlencoded' });
  assert.deepEqual([declared.status, declared.connection, declared.body], [413, 'close', tooBig]);
  const res = await fetch(`${base}/form`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: chunked(4 * 1024 * 1024 + 1), duplex: 'half' } as RequestInit);
  assert.deepEqual([res.status, res.headers.get('connection'), await res.json()], [413, 'close', tooBig]);
  // At the limit exactly, the form is read.
  const at = await post('/form', 'a='.padEnd(4 * 1024 * 1024, 'x'), { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(at.status, 200);
});

test('JSON: a body without a type is refused like any non-JSON type, an empty one is {}, and __proto__ stays data', async () => {
  const untyped = await post('/json', Buffer.from('{"a":1}'));
  assert.deepEqual([untyped.status, untyped.body], [400, { error: 'content type must be application/json', code: 'bad_request' }]);
  const empty = await post('/json', Buffer.alloc(0));
  assert.deepEqual([empty.status, empty.body], [200, { body: {}, own: [] }]);
  const blank = await post('/json', ' \n', { 'content-type': 'text/plain' });
  assert.deepEqual(blank.body, { body: {}, own: [] });
  const proto = await post('/json', '{"__proto__":{"x":1},"a":2}', { 'content-type': 'application/json' });
  assert.deepEqual([proto.status, proto.body.own], [200, ['__proto__', 'a']]);
  // Over 1 MiB of another type is the 413: size is checked before type.
  const big = await post('/json', 'x'.repeat(1024 * 1024 + 1), { 'content-type': 'text/plain' });
  assert.deepEqual([big.status, big.body], [413, { error: 'request body exceeds 1 MiB', code: 'payload_too_large' }]);
});

test('JSON: a gzip body is read inflated, within 1 MiB of inflated bytes; a corrupt or unknown encoding is 400', async () => {
  const gz = (text: string) => gzipSync(Buffer.from(text));
  const ok = await post('/json', gz('{"a":[1,2]}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  assert.deepEqual([ok.status, ok.body.body], [200, { a: [1, 2] }]);
  const bomb = await post('/json', gz(`{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  assert.deepEqual([bomb.status, bomb.connection, bomb.body], [413, 'close', { error: 'request body exceeds 1 MiB', code: 'payload_too_large' }]);
  const corrupt = await post('/json', Buffer.from('not gzip at all'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  assert.equal(corrupt.status, 400);
  assert.match(String(corrupt.body.error), /^cannot read the request body: /);
  const unknown = await post('/json', Buffer.from('{}'), { 'content-type': 'application/json', 'content-encoding': 'zz' });
  assert.deepEqual([unknown.status, unknown.body], [400, { error: 'cannot read the request body: Unsupported Content-Encoding: zz', code: 'bad_request' }]);
});

/** Sends the head and the first bytes of a body, hangs up, and returns what the reader threw. */
async function cutShort(headers: string, partial: Buffer): Promise<unknown> {
  const before = failures.length;
  const { port } = new URL(base);
  const socket = connect(Number(port), '127.0.0.1', () => {
    socket.write(`POST /json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n`);
    socket.write(partial);
    setTimeout(() => socket.destroy(), 100);
  });
  socket.on('error', () => {});
  await once(socket, 'close');
  await waitFor(() => failures.length > before, 30_000, 'the reader giving up on a body cut short');
  return failures.at(-1);
}

test('an upload cut short, plain or compressed, is the client hanging up (a 4xx nobody reads), not a server failure', async () => {
  const gz = gzipSync(Buffer.from(`{"a":"${'x'.repeat(5000)}"}`));
  for (const [headers, partial] of [
    ['Content-Length: 1000\r\n', Buffer.from('{"a":')],
    // The inflating stream never hears of the hang-up; the reader must not wait on it forever.
    [`Content-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n`, gz.subarray(0, 20)],
  ] as const) {
    const e = toHttpError(await cutShort(headers, partial));
    assert.deepEqual([e.status, e.message], [400, 'the client closed the connection before its request body ended'], headers);
  }
});
