// The web console over plain HTTP (no browser): session expiry on
// an injected clock, the sign-in form's own CSRF check and `next` kept on
// this site, keyset paging and filters of the executions list, security
// headers, and the live output feed's offsets.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OutputFeed, type OutputChunk } from '../actors/daemon/output-feed.js';
import { SessionStore } from '../http/ui/sessions.js';
import { startUiDaemon, type UiDaemon } from './helpers/ui-daemon.js';

let d: UiDaemon;
before(async () => {
  d = await startUiDaemon();
});
after(async () => {
  await d?.close();
});

interface Answer {
  readonly status: number;
  readonly location: string | null;
  readonly headers: Headers;
  readonly text: string;
}

async function get(path: string, cookie = ''): Promise<Answer> {
  const res = await fetch(d.url + path, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text() };
}

async function post(path: string, form: Record<string, string>, cookie = ''): Promise<Answer> {
  const res = await fetch(d.url + path, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) }, body: new URLSearchParams(form).toString() });
  return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text() };
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const cookiesOf = (h: Headers) => h.getSetCookie().map((c) => c.split(';')[0]!).join('; ');

async function session(token: string, next = '/ui'): Promise<{ cookie: string; csrf: string; location: string | null }> {
  const form = await get('/ui/sign-in');
  const signed = await post('/ui/sign-in', { _csrf: csrfOf(form.text), token, next }, cookiesOf(form.headers));
  const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('service_session='))!.split(';')[0]!;
  const home = await get('/ui', cookie);
  return { cookie, csrf: csrfOf(home.text), location: signed.location };
}

test('sessions end after the idle time and after the absolute lifetime (injected clock)', () => {
  let now = 0;
  const s = new SessionStore({ idleMs: 1000, maxMs: 5000, now: () => now });
  const a = s.create('p1', 'digest');
  now = 900;
  assert.equal(s.get(a.id)?.projectId, 'p1', 'alive, idle time restarts');
  now = 1800;
  assert.ok(s.get(a.id), 'alive: 900 ms since the last request');
  now = 2801;
  assert.equal(s.get(a.id), undefined, 'idle too long');
  const b = s.create('p1', 'digest');
  for (now = 3000; now <= 7800; now += 800) assert.ok(s.get(b.id), `alive at ${now}`);
  now = 8001;
  assert.equal(s.get(b.id), undefined, 'past the absolute lifetime even though active');
  assert.notEqual(a.csrf, b.csrf);
});

test('the sign-in form checks its own CSRF secret; next stays on this site; every answer carries the security headers', async () => {
  const form = await get('/ui/sign-in');
  assert.match(form.headers.get('content-security-policy') ?? '', /^default-src 'none'; script-src 'self'; style-src 'self'/);
  assert.equal(form.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(form.headers.get('x-frame-options'), 'DENY');
  assert.equal(form.headers.get('cache-control'), 'no-store');
  const noCookie = await post('/ui/sign-in', { _csrf: csrfOf(form.text), token: d.acme.token });
  assert.equal(noCookie.status, 403);
  assert.match(noCookie.text, /the sign-in form expired or was not sent by this page/);
  for (const [next, expected] of [['//evil.example/x', '/ui'], ['https://evil.example', '/ui'], ['/ui/jobs?x=1', '/ui/jobs?x=1'], ['/ui/sign-out', '/ui']]) {
    const s = await session(d.acme.token, next!);
    assert.equal(s.location, expected, next);
  }
  // Behind a TLS-terminating proxy the cookies are Secure.
  const tlsForm = await fetch(`${d.url}/ui/sign-in`, { headers: { 'x-forwarded-proto': 'https' } });
  assert.match(tlsForm.headers.getSetCookie()[0] ?? '', /; secure; httponly$/);
  const tls = await fetch(`${d.url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(tlsForm.headers) },
    body: new URLSearchParams({ _csrf: csrfOf(await tlsForm.text()), token: d.acme.token }).toString(),
  });
  assert.equal(tls.status, 303);
  assert.match(tls.headers.getSetCookie().find((c) => c.startsWith('service_session=')) ?? '', /; path=\/ui; expires=[^;]+; samesite=strict; secure; httponly$/);
  const js = await get('/ui/static/console.js');
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.match(js.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  // The API is unchanged: no cookie opens it.
  const { cookie } = await session(d.acme.token);
  const api = await fetch(`${d.url}/project/get`, { headers: { cookie } });
  assert.equal(api.status, 401);
});

test('executions: 50 per page with Older/Newer links by keyset, filters by status and period, a bad filter named', async () => {
  const { cookie } = await session(d.acme.token);
  const job = await d.daemon.store.createJob({
    project_id: d.acme.id, name: 'paged', type: 'query', file_name: 'q.sql', description: '', active: false, default: false,
    streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
  });
  const t0 = Date.parse('2025-03-01T00:00:00Z');
  // 120 executions; every 10th an error; pairs share a start time (ties broken by exec_id).
  await d.daemon.store.insertExecutionsBulk(
    Array.from({ length: 120 }, (_, i) => ({
      project_id: d.acme.id, job_id: job.id, job_name: 'paged', job_type: 'query' as const, file_name: 'q.sql', trigger: 'api' as const,
      status: i % 10 === 0 ? ('error' as const) : ('success' as const), start_time: new Date(t0 + Math.floor(i / 2) * 60_000).toISOString(), end_time: new Date(t0 + Math.floor(i / 2) * 60_000 + 500).toISOString(),
    })),
  );
  const all = (await d.daemon.store.listExecutions({ projectId: d.acme.id, jobId: job.id, order: 'desc', limit: 100 })).map((e) => e.exec_id);
  const rest = (await d.daemon.store.listExecutions({ projectId: d.acme.id, jobId: job.id, order: 'desc', limit: 100, after: { start_time: '2025-03-01T00:19:00.000Z', exec_id: '0' } })).map((e) => e.exec_id);
  const expected = [...all, ...rest.filter((id) => !all.includes(id))];
  assert.equal(expected.length, 120);
  const ids = (html: string) => [...html.matchAll(/<tr data-exec="([^"]+)">/g)].map((m) => m[1]!);
  // An attribute as the browser reads it (handlebars writes = as &#x3D; and & as &amp;).
  const link = (html: string, rel: string) => new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(html)?.[1]?.replace(/&#x3D;/g, '=').replace(/&amp;/g, '&');

  const p1 = await get(`/ui/executions?job=${job.id}`, cookie);
  assert.deepEqual(ids(p1.text), expected.slice(0, 50));
  assert.equal(link(p1.text, 'prev'), undefined);
  const p2 = await get(link(p1.text, 'next')!, cookie);
  assert.deepEqual(ids(p2.text), expected.slice(50, 100));
  const p3 = await get(link(p2.text, 'next')!, cookie);
  assert.deepEqual(ids(p3.text), expected.slice(100));
  assert.equal(link(p3.text, 'next'), undefined, 'the oldest page has no Older');
  const back = await get(link(p3.text, 'prev')!, cookie);
  assert.deepEqual(ids(back.text), expected.slice(50, 100));
  const top = await get(link(back.text, 'prev')!, cookie);
  assert.equal(top.status, 303, 'Newer from page 2 is the newest page');

  const errors = await get(`/ui/executions?job=${job.id}&status=error`, cookie);
  assert.equal(ids(errors.text).length, 12);
  const period = await get(`/ui/executions?job=${job.id}&from=2025-03-01T00:10&to=2025-03-01T00:20`, cookie);
  assert.equal(ids(period.text).length, 20, 'start_time in [00:10, 00:20)');
  const bad = await get('/ui/executions?from=yesterday', cookie);
  assert.equal(bad.status, 400);
  assert.match(bad.text, /From must be a date and time \(YYYY-MM-DDTHH:MM\[:SS\], UTC\), got &quot;yesterday&quot;/);
  const cursor = await get('/ui/executions?after=nonsense', cookie);
  assert.equal(cursor.status, 400);
});

test('the output feed numbers each task’s chunks by offset, per execution, and forgets an ended execution', () => {
  const feed = new OutputFeed();
  const seen: OutputChunk[] = [];
  const stop = feed.subscribe('e1', (c) => seen.push(c));
  feed.publish('e1', 'task_1', 'a\n');
  feed.publish('e2', 'task_1', 'other\n');
  feed.publish('e1', 'task_1', 'bb\n');
  feed.publish('e1', 'task_2', 'c\n');
  stop();
  feed.publish('e1', 'task_1', 'after\n');
  assert.deepEqual(seen.map((c) => [c.id, c.offset, c.text]), [['task_1', 0, 'a\n'], ['task_1', 2, 'bb\n'], ['task_2', 0, 'c\n']]);
  feed.forget('e1');
  const again: OutputChunk[] = [];
  feed.subscribe('e1', (c) => again.push(c));
  feed.publish('e1', 'task_1', 'x\n');
  assert.equal(again[0]!.offset, 0);
});

test('jobs: Run with NAME=value variables (a bad line named), Deactivate/Activate; overview: Pull now shows the pull', async () => {
  const { cookie, csrf } = await session(d.acme.token);
  const { createGitRemote } = await import('./helpers/git-remote.js');
  const remote = await createGitRemote(d.base, 'ui-remote');
  const sha = await remote.commit({ 'queries/from-git.sql': '-- connection: NOWHERE\nselect 1;\n' });
  await d.daemon.store.updateProjectGit(d.acme.id, { url: remote.url, branch: 'main', enabled: false, poll_interval: 3600 });
  const off = await post('/ui/git/pull', { _csrf: csrf }, cookie);
  assert.match(off.text, /Pull failed: git integration is disabled/);
  await d.daemon.store.updateProjectGit(d.acme.id, { enabled: true });
  const pulled = await post('/ui/git/pull', { _csrf: csrf }, cookie);
  assert.equal(pulled.status, 200);
  // The daemon's poller may have pulled first: then this pull finds the tree up to date.
  assert.match(pulled.text, new RegExp(`(Pulled <code>${sha}</code>: 1 created, 0 updated, 0 deleted|Already up to date at <code>${sha}</code>)`));
  assert.match((await get('/ui', cookie)).text, new RegExp(`Last pull</dt><dd>[^<]+ · <code>${sha}</code>`));

  const [job] = await d.daemon.store.listJobs(d.acme.id, { file_name: 'queries/from-git.sql' });
  assert.ok(job, 'the pulled job file got its default job');
  const bad = await post(`/ui/jobs/${job.id}/run`, { _csrf: csrf, vars: 'DAY=2025-01-01\nnot a pair' }, cookie);
  assert.equal(bad.status, 400);
  assert.match(bad.text, /variables line 2: expected NAME&#x3D;value, got &quot;not a pair&quot;/);
  const ran = await post(`/ui/jobs/${job.id}/run`, { _csrf: csrf, vars: 'DAY=2025-01-01\r\n\r\n# a comment\r\nNOTE = a=b ' }, cookie);
  assert.equal(ran.status, 303);
  const execId = ran.location!.split('/').at(-1)!;
  const exec = await d.daemon.store.getExecution(d.acme.id, execId);
  assert.deepEqual(exec?.overrides?.vars, { DAY: '2025-01-01', NOTE: ' a=b ' });
  assert.equal(exec?.trigger, 'manual');

  assert.equal((await post(`/ui/jobs/${job.id}/active`, { _csrf: csrf, active: 'false' }, cookie)).status, 303);
  assert.equal((await d.daemon.store.getJob(d.acme.id, job.id))?.active, false);
  assert.match((await get(`/ui/jobs/${job.id}`, cookie)).text, /<button type="submit">Activate<\/button>/);
  assert.equal((await post(`/ui/jobs/${job.id}/active`, { _csrf: csrf, active: 'true' }, cookie)).status, 303);
  assert.equal((await d.daemon.store.getJob(d.acme.id, job.id))?.active, true);
  assert.equal((await post(`/ui/jobs/${job.id}/active`, { _csrf: csrf, active: 'maybe' }, cookie)).status, 400);
});

test('stopping the daemon ends the live streams of executions that will never end here', async () => {
  const own = await startUiDaemon();
  try {
    const job = await own.daemon.store.createJob({
      project_id: own.acme.id, name: 'orphan', type: 'query', file_name: 'q.sql', description: '', active: false, default: false,
      streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
    });
    // Running in the store, but no work of this daemon behind it: its status never changes.
    const exec = await own.daemon.store.createExecution({ project_id: own.acme.id, job_id: job.id, job_name: 'orphan', job_type: 'query', file_name: 'q.sql', trigger: 'api', status: 'running', start_time: new Date().toISOString() });
    const form = await fetch(`${own.url}/ui/sign-in`);
    const signed = await fetch(`${own.url}/ui/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(form.headers) }, body: new URLSearchParams({ _csrf: csrfOf(await form.text()), token: own.acme.token }).toString() });
    const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('service_session='))!.split(';')[0]!;
    const res = await fetch(`${own.url}/ui/executions/${exec.exec_id}/events`, { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^event: exec\ndata: \{"exec_id":"[^"]+".*"status":"running"/);
    const rest = (async () => {
      while (!(await reader.read()).done);
    })();
    await own.close();
    await rest; // the stream ended: the daemon did not wait for it forever
  } catch (err) {
    await own.close().catch(() => {});
    throw err;
  }
});

test('browser tests: a missing Chromium fails them under CI=true and skips them locally, saying how to install it', async () => {
  const { requireBrowser } = await import('./helpers/browser.js');
  const saved = { CI: process.env.CI, path: process.env.SERVICE_TEST_CHROMIUM };
  process.env.SERVICE_TEST_CHROMIUM = '/nonexistent/chromium';
  try {
    process.env.CI = 'true';
    await assert.rejects(requireBrowser({ skip: () => assert.fail('must not skip in CI') }), /Chromium not found at \/nonexistent\/chromium and CI=true: browser tests must not be skipped in CI \(install it with apt-get install -y chromium\)/);
    delete process.env.CI;
    const skipped: string[] = [];
    assert.equal(await requireBrowser({ skip: (m?: string) => void skipped.push(m ?? '') }), undefined);
    assert.deepEqual(skipped, ["Chromium not found at /nonexistent/chromium; install it with apt-get install -y chromium to run the web console's browser tests"]);
  } finally {
    for (const [k, v] of [['CI', saved.CI], ['SERVICE_TEST_CHROMIUM', saved.path]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test('the file tree nests the sorted listing under its folders, open down to the second level', async () => {
  const { fileTree } = await import('../http/ui/pages/file-pages.js');
  const f = (name: string, is_dir = false) => ({ name, is_dir, size: is_dir ? 0 : 10, updated: '2025-01-01T00:00:00.000Z' });
  const tree = fileTree([f('a', true), f('a-b.sql'), f('a/b', true), f('a/b/c', true), f('a/b/c/d.sql'), f('a/x.sql'), f('z.sql')]);
  const show = (entries: typeof tree): unknown => entries.map((e) => (e.is_dir ? { [`${e.base}/${e.open ? '' : ' (closed)'}`]: show(e.children) } : e.base));
  assert.deepEqual(show(tree), [{ 'a/': [{ 'b/': [{ 'c/ (closed)': ['d.sql'] }] }, 'x.sql'] }, 'a-b.sql', 'z.sql']);
});

test('page routing: a path served with another method is 405, any other path or a malformed %-escape 404; HEAD answers like GET without a body', async () => {
  const head = await fetch(`${d.url}/ui/static/console.css`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type') ?? '', /^text\/css/);
  assert.equal(await head.text(), '');
  // Signed out, a near miss of a path that answers without a session is just another page: off to sign-in.
  for (const path of ['/ui/static/console.js/', '/ui/Sign-in']) assert.equal((await get(path)).location?.startsWith('/ui/sign-in?next='), true, path);
  const { cookie } = await session(d.acme.token);
  const cases: [string, string, number][] = [
    ['GET', '/ui/files/save', 405],
    ['HEAD', '/ui/files/save', 405],
    ['POST', '/ui/files', 405],
    ['GET', '/ui/nope', 404],
    ['GET', '/ui/static/console.js/', 404],
    ['GET', '/ui/jobs/%E0%A4%A', 404],
    ['GET', '/ui/executions/not-an-id', 404],
    ['HEAD', '/ui', 200],
    ['HEAD', '/ui/', 200],
  ];
  for (const [method, path, status] of cases) {
    const res = await fetch(d.url + path, { method, redirect: 'manual', headers: { cookie } });
    const text = await res.text();
    assert.equal(res.status, status, `${method} ${path}`);
    if (method === 'HEAD') assert.equal(text, '', `${method} ${path} has no body`);
    else if (status === 405) assert.match(text, new RegExp(`no page at ${method} ${path}`));
  }
});
