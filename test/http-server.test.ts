/**
 * The daemon's HTTP server as `service serve` wires it: HEAD on GET routes,
 * malformed %-escapes in console paths, a client hanging up mid-body, the
 * server timeouts, the console's CSRF check and its paged file tree (plain
 * fetch, no browser), the per-address limit on failed authentication, the
 * answer while the daemon starts, and `/health` reporting the state store.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, createServer as createNetServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startDaemon } from '../daemon/start-daemon.js';
import { VERSION } from '../engine/version.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { createApp } from '../http/app.js';
import { AuthFailureLimiter } from '../http/auth-limit.js';
import { StoreProbe } from '../http/health.js';
import { apiRoutes } from '../http/routes/index.js';
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS, startingServer } from '../http/startup.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';
import { startUiDaemon, type UiDaemon } from './helpers/ui-daemon.js';

let d: UiDaemon;
before(async () => {
  d = await startUiDaemon();
});
after(async () => {
  await d?.close();
});

const auth = () => ({ authorization: `Service-Project-Token ${d.acme.token}` });
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const cookiesOf = (h: Headers) => h.getSetCookie().map((c) => c.split(';')[0]!).join('; ');

/** A signed-in console session: its cookie and its CSRF token. */
async function session(): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${d.url}/ui/sign-in`);
  const signed = await fetch(`${d.url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(form.headers) },
    body: new URLSearchParams({ _csrf: csrfOf(await form.text()), token: d.acme.token }).toString(),
  });
  const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('service_session='))!.split(';')[0]!;
  const home = await fetch(`${d.url}/ui`, { headers: { cookie } });
  return { cookie, csrf: csrfOf(await home.text()) };
}

test('HEAD is answered on GET routes like GET, without a body', async () => {
  for (const [p, headers] of [['/health', {}], ['/openapi.json', {}], ['/project/get', auth()], ['/connection/list', auth()]] as const) {
    const head = await fetch(d.url + p, { method: 'HEAD', headers });
    assert.equal(head.status, 200, p);
    assert.equal(head.headers.get('content-type'), 'application/json; charset=utf-8', p);
    assert.equal(await head.text(), '', p);
  }
  assert.equal((await fetch(`${d.url}/project/get`, { method: 'HEAD' })).status, 401);
  assert.equal((await fetch(`${d.url}/project/file/list`, { method: 'HEAD', headers: auth() })).status, 404, 'a POST route has no HEAD');
});

test('a malformed %-escape in a console path is 404, not 500', async () => {
  const { cookie } = await session();
  for (const p of ['/ui/jobs/%E0%A4%A', '/ui/jobs/%ZZ', '/ui/jobs/%']) {
    const res = await fetch(d.url + p, { headers: { cookie }, redirect: 'manual' });
    assert.equal(res.status, 404, p);
  }
  assert.ok(!d.logs.some((l) => l.startsWith('error ')), d.logs.filter((l) => l.startsWith('error ')).join('\n'));
});

test('a client hanging up mid-body is one request line with a 4xx, not a 500 with a stack', async () => {
  const { port } = new URL(d.url);
  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(`POST /project/file/save HTTP/1.1\r\nHost: x\r\nAuthorization: Service-Project-Token ${d.acme.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"file":`);
      setTimeout(() => socket.destroy(), 100);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => {});
  });
  const line = await waitFor(() => d.logs.find((l) => / POST \/project\/file\/save \d{3} /.test(l)));
  assert.match(line, / POST \/project\/file\/save 400 /);
  assert.ok(!d.logs.some((l) => l.startsWith('error ')), d.logs.filter((l) => l.startsWith('error ')).join('\n'));
});

test('server timeouts are set: headers, whole request, keep-alive', () => {
  assert.equal(d.daemon.server.headersTimeout, HEADERS_TIMEOUT_MS);
  assert.equal(d.daemon.server.requestTimeout, REQUEST_TIMEOUT_MS);
  assert.equal(d.daemon.server.keepAliveTimeout, KEEP_ALIVE_TIMEOUT_MS);
  assert.deepEqual([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS], [20_000, 60_000, 5_000]);
});

test('console CSRF: a form post without the session\'s token, or with another session\'s, is 403 and changes nothing', async () => {
  const mine = await session();
  const other = await session();
  const post = (form: Record<string, string>, cookie: string) =>
    fetch(`${d.url}/ui/files/save`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: new URLSearchParams(form).toString() });
  const file = { name: 'csrf.txt', body: 'x', new: '1' };
  for (const [label, form] of [['no token', file], ['empty token', { ...file, _csrf: '' }], ['a wrong token', { ...file, _csrf: 'A'.repeat(mine.csrf.length) }], ["another session's token", { ...file, _csrf: other.csrf }]] as const) {
    const res = await post(form, mine.cookie);
    assert.equal(res.status, 403, label);
    assert.match(await res.text(), /missing or wrong CSRF token/, label);
  }
  const missing = await fetch(`${d.url}/project/file/get?name=csrf.txt`, { headers: auth() });
  assert.equal(missing.status, 404, 'nothing was written');
  // Signing out is a form post too.
  const out = await fetch(`${d.url}/ui/sign-out`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: mine.cookie }, body: '_csrf=nope' });
  assert.equal(out.status, 403);
  const ok = await post({ ...file, _csrf: mine.csrf }, mine.cookie);
  assert.equal(ok.status, 303);
  assert.equal((await fetch(`${d.url}/project/file/get?name=csrf.txt`, { headers: auth() })).status, 200);
});

test('the console lists files 1,000 per page with links to the others', async () => {
  const dir = path.join(d.acme.root, 'paged');
  await mkdir(dir, { recursive: true });
  await Promise.all(Array.from({ length: 2400 }, (_, i) => writeFile(path.join(dir, `f${String(i).padStart(4, '0')}.txt`), 'x')));
  const { cookie } = await session();
  const total = ((await (await fetch(`${d.url}/project/file/list`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{}' })).json()) as { files: unknown[] }).files.length;
  const first = await (await fetch(`${d.url}/ui/files`, { headers: { cookie } })).text();
  assert.match(first, new RegExp(`Entries 1–1000 of ${total}`));
  assert.match(first, /href="\/ui\/files\?page=2" rel="next"/);
  assert.equal((first.match(/href="\/ui\/files\/view\?name=/g) ?? []).length <= 1000, true);
  const last = await (await fetch(`${d.url}/ui/files?page=3`, { headers: { cookie } })).text();
  assert.match(last, new RegExp(`Entries 2001–${total} of ${total}`));
  assert.match(last, /paged\/f2399\.txt/);
  assert.doesNotMatch(last, /rel="next"/);
});

test('/health while the daemon starts: 503 "starting" with its version, then the app', async () => {
  const s = startingServer('9.9.9');
  await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
  try {
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 503);
    assert.equal(health.headers.get('retry-after'), '1');
    assert.deepEqual(await health.json(), { status: 'starting', version: '9.9.9', error: 'the daemon is starting: recovery is not done yet', code: 'unavailable' });
    const head = await fetch(`${url}/health`, { method: 'HEAD' });
    assert.equal(head.status, 503);
    const other = await fetch(`${url}/project/get`, { headers: auth() });
    assert.deepEqual([other.status, await other.json()], [503, { error: 'the daemon is starting: recovery is not done yet', code: 'unavailable' }]);
    s.ready((_req, res) => res.end('ready'));
    assert.equal(await (await fetch(`${url}/health`)).text(), 'ready');
  } finally {
    await new Promise((resolve) => s.server.close(resolve));
  }
});

test('service serve listens before its state store opens: /health is 503 "starting" while the store does not answer', async () => {
  // A "database" that accepts connections and never answers: opening the store waits on it.
  const sockets = new Set<import('node:net').Socket>();
  const silent = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  const base = await mkdtemp(path.join(os.tmpdir(), 'service-starting-'));
  const state = `postgresql://nobody@127.0.0.1:${(silent.address() as AddressInfo).port}/none`;
  const starting = startDaemon({ host: '127.0.0.1', port, dataDir: path.join(base, 'data'), state, maxRunning: 1, gracePeriodMs: 0, allowCommandSteps: false }, { log: () => {}, enabled: () => false });
  const failed = starting.then(() => 'started', (err: unknown) => String(err));
  try {
    const health = await waitFor(() => fetch(`http://127.0.0.1:${port}/health`).then((r) => r, () => undefined));
    assert.equal(health.status, 503);
    assert.deepEqual(await health.json(), { status: 'starting', version: VERSION, error: 'the daemon is starting: recovery is not done yet', code: 'unavailable' });
  } finally {
    // The "database" hangs up: opening the store fails and the daemon gives up.
    silent.close();
    for (const socket of sockets) socket.destroy();
    assert.notEqual(await failed, 'started');
    await rm(base, { recursive: true, force: true });
  }
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), 'a daemon that failed to start stops listening');
});

describe('/health and the state store', () => {
  test('a store read that does not answer within 1 s makes the probe unreachable at the bound, and later requests do not wait', async () => {
    let now = 0;
    const never = new StoreProbe({ ping: () => new Promise<number>(() => {}) }, 50, () => now);
    const pending = never.check();
    now = 60; // the bound passes while the read still hangs
    assert.deepEqual(await pending, { reachable: false, latency_ms: null, error: 'no answer to a read within 50 ms' });
    assert.equal((await never.check()).reachable, false, 'a second request answers at once');
    const failing = new StoreProbe({ ping: () => Promise.reject(new Error('connection terminated')) });
    assert.deepEqual(await failing.check(), { reachable: false, latency_ms: null, error: 'a read failed: connection terminated' });
  });

  test('PostgreSQL store: /health is 200 with the read latency, 503 while `executions` is locked, 200 again after', async (t) => {
    if (!(await requirePg(t))) return;
    const db = await createTempDatabase('svc_health');
    const store = await openStateStore(db.url, { daemonId: 'health-test' });
    const locker = new pg.Client({ connectionString: db.url });
    locker.on('error', () => {});
    const app = createApp({ routes: apiRoutes({ version: '1.0.0', store, projects: {} as never, executions: {} as never, connections: () => ({}) as never }), projectForDigest: async () => undefined, logger: { log: () => {}, enabled: () => false } });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
    try {
      const ok = await fetch(url);
      const body = (await ok.json()) as { store: { reachable: boolean } };
      assert.equal(ok.status, 200);
      assert.equal(body.store.reachable, true);
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table executions in access exclusive mode');
      await new Promise((r) => setTimeout(r, 600)); // the last probe's answer is reused for 500 ms
      const locked = await fetch(url);
      assert.equal(locked.status, 503);
      assert.equal(locked.headers.get('retry-after'), '1');
      const lb = (await locked.json()) as { status: string; code: string; error: string; store: { reachable: boolean } };
      assert.deepEqual([lb.status, lb.code, lb.store.reachable], ['unavailable', 'unavailable', false]);
      // Either the probe's own bound or the store's statement timeout answers first: both name the 1 s bound.
      assert.match(lb.error, /^the state store is not answering: .*within 1000 ms$/);
      await locker.query('rollback');
      const again = await waitFor(async () => ((await fetch(url)).status === 200 ? true : undefined));
      assert.equal(again, true);
    } finally {
      await locker.end().catch(() => {});
      await new Promise((resolve) => server.close(resolve));
      await store.close();
      await db.drop();
    }
  });
});

describe('failed authentication is limited per address', () => {
  // A daemon of its own: the failures of the tests above would count.
  let own: UiDaemon;
  let shared: UiDaemon;
  before(async () => {
    own = await startUiDaemon();
    shared = d;
    d = own;
  });
  after(async () => {
    d = shared;
    await own.close();
  });

  test('after 20 failures in a minute: 429 with Retry-After on the API and on sign-in; valid tokens are still served', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${d.url}/project/get`, { headers: { authorization: `Service-Project-Token ${crypto.randomUUID()}` } });
      assert.equal(res.status, 401, `failure ${i + 1}`);
    }
    const limited = await fetch(`${d.url}/project/get`, { headers: { authorization: 'Service-Project-Token not-a-token' } });
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    const body = (await limited.json()) as { code: string; error: string };
    assert.equal(body.code, 'too_many_requests');
    assert.match(body.error, /^too many failed authentication attempts from this address: 20 in 60 s; retry in \d+ s$/);
    assert.equal((await fetch(`${d.url}/project/get`, { headers: auth() })).status, 200, 'a valid token is served');
    assert.equal((await fetch(`${d.url}/health`)).status, 200, 'public routes are served');
    // The console's sign-in shares the limit.
    const form = await fetch(`${d.url}/ui/sign-in`);
    const signIn = await fetch(`${d.url}/ui/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(form.headers) },
      body: new URLSearchParams({ _csrf: csrfOf(await form.text()), token: crypto.randomUUID() }).toString(),
    });
    assert.equal(signIn.status, 429);
    assert.ok(Number(signIn.headers.get('retry-after')) >= 1);
    assert.equal((await session()).cookie.startsWith('service_session='), true, 'a valid token still signs in');
  });

  test('the window ends: failures count again from zero (injected clock)', () => {
    let now = 0;
    const limiter = new AuthFailureLimiter(2, 1000, () => now);
    assert.equal(limiter.fail('a'), undefined);
    assert.equal(limiter.fail('a'), undefined);
    assert.equal(limiter.fail('a')?.status, 429);
    assert.equal(limiter.fail('b'), undefined, 'per address');
    now = 400;
    assert.equal(limiter.fail('a')?.options.retryAfter, 1);
    now = 1000;
    assert.equal(limiter.fail('a'), undefined, 'a new window');
  });
});

function freePort(): Promise<number> {
  const probe = createNetServer();
  return new Promise((resolve) => probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(port));
  }));
}

async function waitFor<T>(fn: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
