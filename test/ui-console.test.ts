// The web console in a real browser (Debian's Chromium through
// playwright-core) against the real daemon wiring — sign-in, redirects and
// project isolation; escaping of hostile names and log lines; CSRF; the
// editor's problems at their line; the lineage of a 9-model DuckDB build
// project with a failed model in red. Screenshots of each page at
// 1280×800 and 390 px are written to SCREENSHOT_DIR. One daemon and one
// browser serve every test of the file.
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { requireBrowser, screenshots } from './helpers/browser.js';
import { startUiDaemon, type UiDaemon } from './helpers/ui-daemon.js';
import { api, saveFile, signIn, type PageDocument } from './helpers/ui-session.js';

const LAKE_ENV = 'connections:\n  LAKE:\n    type: duckdb\n    instance: lake.duckdb\n';

let d: UiDaemon;
let browser: Browser | undefined;

before(async () => {
  d = await startUiDaemon({ acmeEnv: LAKE_ENV });
});
after(async () => {
  await browser?.close();
  await d?.close();
});

async function ready(t: TestContext): Promise<Browser | undefined> {
  browser ??= await requireBrowser(t);
  return browser;
}

/** Waits until the execution's page shows a terminal status; returns it. */
async function finalStatus(page: import('playwright-core').Page): Promise<string> {
  const el = page.locator('[data-exec-status]');
  await page.waitForFunction(() => !['queued', 'running'].includes((globalThis as unknown as { document: PageDocument }).document.querySelector('[data-exec-status]')?.textContent ?? 'queued'), undefined, { timeout: 60_000 });
  return (await el.textContent()) ?? '';
}

test('signed out, every console page redirects to sign-in; a wrong token is refused; the session cookie is HttpOnly and SameSite=Strict; sign-out ends it', async (t) => {
  const b = await ready(t);
  if (!b) return;
  const context = await b.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  for (const path of ['/ui', '/ui/', '/ui/jobs', '/ui/jobs/job_0000000000000000', '/ui/executions', '/ui/executions/2pVbpT4r5yHUig43kiJfahqSIjO', '/ui/files', '/ui/files/view?name=a.sql', '/ui/lineage']) {
    await page.goto(d.url + path);
    const url = new URL(page.url());
    assert.equal(url.pathname, '/ui/sign-in', path);
    assert.equal(url.searchParams.get('next'), path === '/ui/' ? '/ui/' : path, path);
  }
  await screenshots(page, 'sign-in');

  await page.fill('#token', 'f3a0c2de-1111-4222-8333-444455556666');
  const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button[type=submit]')]);
  assert.equal(refused.status(), 401);
  assert.match((await page.locator('[role=alert]').textContent()) ?? '', /does not open any project/);
  assert.equal(new URL(page.url()).pathname, '/ui/sign-in');

  // Signing in after a redirect lands on the page asked for.
  await page.goto(`${d.url}/ui/files`);
  await page.fill('#token', d.acme.token);
  await Promise.all([page.waitForURL(`${d.url}/ui/files`), page.click('button[type=submit]')]);
  assert.equal(await page.locator('header .project').textContent(), 'acme');
  assert.ok(!(await page.content()).includes(d.acme.token), 'the token is never rendered back');
  const [cookie] = (await context.cookies()).filter((c) => c.name === 'service_session');
  assert.ok(cookie, 'a session cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.secure, false, 'Secure only over TLS');
  assert.ok(!cookie.value.includes(d.acme.token));

  await Promise.all([page.waitForURL(/\/ui\/sign-in\?signed_out=1$/), page.click('header .signout button')]);
  await page.goto(`${d.url}/ui/jobs`);
  assert.equal(new URL(page.url()).pathname, '/ui/sign-in');
  await context.close();
});

test("a token of project beta never shows project acme's data", async (t) => {
  const b = await ready(t);
  if (!b) return;
  await saveFile(d, d.acme, 'secret/acme-only.sql', '-- connection: LAKE\nselect 42 as answer;\n');
  const [job] = (await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'secret/acme-only.sql' })).jobs;
  const exec = await d.daemon.store.createExecution({ project_id: d.acme.id, job_id: job.id, job_name: job.name, job_type: 'query', file_name: job.file_name, trigger: 'api', status: 'success', start_time: new Date().toISOString(), end_time: new Date().toISOString() });
  const beta = await signIn(b, d, d.beta);
  const { page } = beta;
  await page.goto(`${d.url}/ui/jobs`);
  assert.ok(!(await page.content()).includes(job.id));
  await page.goto(`${d.url}/ui/files`);
  assert.ok(!(await page.content()).includes('acme-only'));
  await page.goto(`${d.url}/ui/executions`);
  assert.ok(!(await page.content()).includes(exec.exec_id));
  for (const path of [`/ui/executions/${exec.exec_id}`, `/ui/executions/${exec.exec_id}/events`, `/ui/jobs/${job.id}`, '/ui/files/view?name=secret/acme-only.sql']) {
    const res = await page.goto(d.url + path);
    assert.equal(res?.status(), 404, path);
    assert.ok(!(await page.content()).includes('select 42'), path);
  }
  // acme's own session sees them.
  const acme = await signIn(b, d, d.acme);
  const res = await acme.page.goto(`${d.url}/ui/executions/${exec.exec_id}`);
  assert.equal(res?.status(), 200);
  await beta.context.close();
  await acme.context.close();
});

test('a hostile file name and a <script> log line render as text (no dialog); a POST without the CSRF token gets 403; the CSP allows no inline script', async (t) => {
  const b = await ready(t);
  if (!b) return;
  const hostile = '<img src=x onerror=alert(1)>.sql';
  await saveFile(d, d.acme, hostile, 'select 1;\n');
  await saveFile(d, d.acme, 'queries/xss.sql', "-- connection: LAKE\nselect '<script>alert(1)</script>' as payload;\n");
  const { page, dialogs, context } = await signIn(b, d, d.acme);
  const res = await page.goto(`${d.url}/ui/files`);
  const csp = res?.headers()['content-security-policy'] ?? '';
  assert.match(csp, /script-src 'self'/);
  assert.ok(!csp.includes('unsafe-inline'));
  assert.equal(await page.getByRole('link', { name: hostile, exact: true }).count(), 1, 'the name is shown as text');
  assert.equal(await page.locator('main img').count(), 0);
  await page.getByRole('link', { name: hostile, exact: true }).click();
  assert.equal(await page.locator('main h1').textContent(), hostile);
  assert.equal(await page.locator('main img').count(), 0);

  await page.goto(`${d.url}/ui/jobs`);
  const row = page.locator('tr', { has: page.locator('a', { hasText: 'queries/xss.sql' }) });
  await Promise.all([page.waitForURL(/\/ui\/executions\/[0-9A-Za-z]+$/), row.getByRole('button', { name: 'Run' }).click()]);
  assert.equal(await finalStatus(page), 'success');
  await page.waitForFunction(() => ((globalThis as unknown as { document: PageDocument }).document.querySelector('[data-log]')?.textContent ?? '').includes('</script>'));
  assert.match((await page.locator('[data-log]').first().textContent()) ?? '', /<script>alert\(1\)<\/script>/);
  await page.reload();
  assert.match((await page.locator('[data-log]').first().textContent()) ?? '', /<script>alert\(1\)<\/script>/, 'server-rendered too');
  assert.equal(await page.locator('main script').count(), 0);
  assert.deepEqual(dialogs, []);

  // Same-origin posts with the session cookie, but without the form's token (or with a wrong one).
  const statuses = await page.evaluate(async (posts: [string, string][]) => {
    const out: number[] = [];
    for (const [path, body] of posts) out.push((await fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).status);
    return out;
  }, [['/ui/files/delete', 'name=queries%2Fxss.sql'], ['/ui/files/delete', '_csrf=wrong&name=queries%2Fxss.sql'], ['/ui/git/pull', '']] as [string, string][]);
  assert.deepEqual(statuses, [403, 403, 403]);
  assert.equal((await api(d, d.acme, 'GET', `/project/file/get?name=${encodeURIComponent('queries/xss.sql')}`)).name, 'queries/xss.sql', 'still there');
  await context.close();
});

test('the editor shows a job file problem at its line and column; fixed, the file saves and its default job appears; rename and delete ask first', async (t) => {
  const b = await ready(t);
  if (!b) return;
  const { page, context } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/files/edit`);
  await page.fill('#name', 'queries/refresh.sql');
  await page.fill('#body', '-- connection: LAKE\n\n  -- connection: OTHER\nselect 1;\n');
  const [saved] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form.editor button[type=submit]')]);
  assert.equal(saved.status(), 422);
  assert.equal(await page.locator('.problems li').count(), 1);
  assert.match((await page.locator('.problems li').textContent()) ?? '', /^line 3, column 3: connection is declared more than once/);
  assert.match((await page.locator('#L3').textContent()) ?? '', /-- connection: OTHER/);
  assert.match((await page.locator('.problem-marker[data-line="3"]').textContent()) ?? '', /^ {2}\^ connection is declared more than once/);
  await screenshots(page, 'file-editor-problem');
  const missing = await fetch(`${d.url}/project/file/get?name=queries/refresh.sql`, { headers: { authorization: `Service-Project-Token ${d.acme.token}` } });
  assert.equal(missing.status, 404, 'nothing was saved');

  await page.fill('#body', '-- connection: LAKE\n\nselect 1;\n');
  await Promise.all([page.waitForURL(/\/ui\/files\/view\?name=queries%2Frefresh\.sql&saved=1$/), page.click('form.editor button[type=submit]')]);
  const jobLink = page.locator('[data-file-job]');
  assert.equal(await jobLink.count(), 1, 'the default job of the file');
  const [job] = (await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'queries/refresh.sql' })).jobs;
  assert.equal(await jobLink.getAttribute('data-file-job'), job.id);
  assert.equal(job.default, true);
  await screenshots(page, 'file-view');

  // Rename: a confirmation page with the new name, then the file and its job follow.
  await page.click('text=Rename');
  await screenshots(page, 'file-rename');
  await page.fill('#confirm-input', 'queries/refresh-daily.sql');
  await Promise.all([page.waitForURL(/renamed=/), page.click('main form button[type=submit]')]);
  assert.equal(await page.locator('main h1').textContent(), 'queries/refresh-daily.sql');
  // Delete: nothing happens before the confirmation.
  await page.click('text=Delete');
  assert.match((await page.locator('main h1').textContent()) ?? '', /^Delete queries\/refresh-daily\.sql\?$/);
  await screenshots(page, 'file-delete');
  assert.equal((await api(d, d.acme, 'GET', '/project/file/get?name=queries/refresh-daily.sql')).name, 'queries/refresh-daily.sql');
  await Promise.all([page.waitForURL(/\/ui\/files\?deleted=/), page.click('main form button[type=submit]')]);
  assert.equal((await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'queries/refresh-daily.sql' })).jobs.length, 0);
  await context.close();
});

// The 9-model project: two roots, a diamond and a tail; m9 reads a table that does not exist.
const MODELS: Record<string, string> = {
  m1: 'select 1 as id',
  m2: 'select 2 as id',
  m3: "select id from {{ ref('m1') }}",
  m4: "select a.id from {{ ref('m1') }} a union all select id from {{ ref('m2') }}",
  m5: "select id from {{ ref('m3') }}",
  m6: "select id from {{ ref('m4') }}",
  m7: "select id from {{ ref('m5') }} union all select id from {{ ref('m6') }}",
  m8: "select count(*) as n from {{ ref('m7') }}",
  m9: "select m.id from {{ ref('m2') }} m join no_such_table x on x.id = m.id",
};
const EDGES = ['m1>m3', 'm1>m4', 'm2>m4', 'm2>m9', 'm3>m5', 'm4>m6', 'm5>m7', 'm6>m7', 'm7>m8'];

test('lineage of a 9-model project: 9 nodes and the right edges in the SVG; after a run, the failed model is red and the others green', async (t) => {
  const b = await ready(t);
  if (!b) return;
  await saveFile(d, d.acme, 'shop9/service_build.yml', 'target: LAKE\n');
  for (const [name, sql] of Object.entries(MODELS)) await saveFile(d, d.acme, `shop9/${name}.sql`, `${sql}\n`);
  await saveFile(d, d.acme, 'pipelines/build9.yaml', 'steps:\n  - id: transform\n    build: shop9\n');
  const { page, context, dialogs } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/lineage`);
  await screenshots(page, 'lineage-projects');
  await Promise.all([page.waitForURL(/\/ui\/lineage\/graph\?dir=shop9$/), page.click('text=shop9')]);
  const nodes = page.locator('svg.lineage g.node');
  assert.equal(await nodes.count(), 9);
  const names = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')).sort());
  assert.deepEqual(names, Object.keys(MODELS));
  const edges = await page.locator('svg.lineage path.edge').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-from')}>${e.getAttribute('data-to')}`).sort());
  assert.deepEqual(edges, EDGES);
  assert.deepEqual(await nodes.evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('data-status')))]), ['none'], 'not run yet');

  // Run the pipeline from its job page; the build fails on m9 only.
  const [job] = (await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'pipelines/build9.yaml' })).jobs;
  await page.goto(`${d.url}/ui/jobs/${job.id}`);
  await screenshots(page, 'job');
  await Promise.all([page.waitForURL(/\/ui\/executions\/[0-9A-Za-z]+$/), page.click('text=Run now')]);
  assert.equal(await finalStatus(page), 'error');
  await screenshots(page, 'execution-pipeline');

  await page.goto(`${d.url}/ui/lineage/graph?dir=shop9`);
  const status = Object.fromEntries(await nodes.evaluateAll((els) => els.map((e) => [e.getAttribute('data-name'), [e.getAttribute('data-status'), e.querySelector('rect')?.getAttribute('fill')]])));
  assert.deepEqual(status.m9, ['error', '#f8c9c4'], 'the failed model is red');
  for (const n of ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8']) assert.deepEqual(status[n], ['success', '#d3f2dc'], n);
  await screenshots(page, 'lineage');

  await page.locator('svg.lineage a', { has: page.locator('g.node[data-name="m4"]') }).click();
  await page.waitForURL(/\/ui\/lineage\/node\?dir=shop9&name=m4$/);
  const sql = (await page.locator('[data-compiled-sql]').textContent()) ?? '';
  assert.match(sql, /union all/);
  assert.ok(!sql.includes('ref('), 'the compiled SQL, refs resolved');
  assert.match((await page.locator('main').textContent()) ?? '', /Used by\s*m6/);
  await screenshots(page, 'lineage-node');
  // The kept layout follows the files: a new model appears at once.
  await saveFile(d, d.acme, 'shop9/m10.sql', "select n from {{ ref('m8') }}\n");
  await page.goto(`${d.url}/ui/lineage/graph?dir=shop9`);
  assert.equal(await nodes.count(), 10);
  assert.equal(await page.locator('svg.lineage path.edge[data-from="m8"][data-to="m10"]').count(), 1);
  assert.deepEqual(dialogs, []);
  await context.close();
});

test('overview (connection test), jobs, executions and files pages render at both sizes', async (t) => {
  const b = await ready(t);
  if (!b) return;
  const { page, context } = await signIn(b, d, d.acme);
  const lake = page.locator('tr', { has: page.locator('code', { hasText: /^LAKE$/ }) });
  await lake.getByRole('button', { name: 'Test' }).click();
  assert.match((await page.locator('.test-result').textContent()) ?? '', /OK/);
  await screenshots(page, 'overview');
  for (const [path, name] of [['/ui/jobs', 'jobs'], ['/ui/executions', 'executions'], ['/ui/files', 'files']] as const) {
    await page.goto(d.url + path);
    await screenshots(page, name);
  }
  // At 390 px the page itself does not scroll sideways: wide tables scroll in their own box.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of ['/ui', '/ui/jobs', '/ui/executions', '/ui/files', '/ui/lineage/graph?dir=shop9']) {
    await page.goto(d.url + path);
    const overflow = await page.evaluate(() => {
      const root = (globalThis as unknown as { document: PageDocument }).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    assert.ok(overflow <= 0, `${path} overflows by ${overflow}px at 390 px`);
  }
  await context.close();
});

test('without JavaScript every page reads and every form works: sign in, run a job, see its execution with its log', async (t) => {
  const b = await ready(t);
  if (!b) return;
  await saveFile(d, d.acme, 'queries/nojs.sql', "-- connection: LAKE\nselect 'plain html' as how;\n");
  const context = await b.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(`${d.url}/ui/jobs`);
  await page.fill('#token', d.acme.token);
  await Promise.all([page.waitForURL(`${d.url}/ui/jobs`), page.click('button[type=submit]')]);
  const row = page.locator('tr', { has: page.locator('a', { hasText: 'queries/nojs.sql' }) });
  await Promise.all([page.waitForURL(/\/ui\/executions\/[0-9A-Za-z]+$/), row.getByRole('button', { name: 'Run' }).click()]);
  const execId = page.url().split('/').at(-1)!;
  // No live updates: reading the finished execution takes a reload.
  for (let i = 0; i < 100 && ['queued', 'running'].includes((await page.locator('[data-exec-status]').textContent()) ?? ''); i++) {
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  assert.equal(await page.locator('[data-exec-status]').textContent(), 'success');
  assert.match((await page.locator('[data-log]').textContent()) ?? '', /plain html/);
  for (const path of ['/ui', '/ui/executions', '/ui/files', '/ui/lineage', `/ui/executions?status=success`]) {
    const res = await page.goto(d.url + path);
    assert.equal(res?.status(), 200, path);
  }
  assert.ok((await page.content()).includes(execId), 'the status filter works as a plain form');
  await context.close();
});
