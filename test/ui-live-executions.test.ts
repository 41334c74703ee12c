// An execution followed live in the browser. A PostgreSQL query
// job run from the Jobs page: its page goes running → success, the log lines
// arriving over server-sent events while it runs (never reloaded). A
// pg_sleep(30) job cancelled from its page: cancelled within seconds and no
// backend left in pg_stat_activity. One daemon and one browser for the file.
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { eventually } from './helpers/api-server.js';
import { requireBrowser, screenshots } from './helpers/browser.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { startUiDaemon, type UiDaemon } from './helpers/ui-daemon.js';
import { api, saveFile, signIn, type PageDocument } from './helpers/ui-session.js';

let d: UiDaemon | undefined;
let db: TempDatabase | undefined;
let browser: Browser | undefined;

before(async () => {
  if (!(await pgAvailable())) return;
  db = await createTempDatabase('ui_live');
  d = await startUiDaemon({ acmeEnv: `connections:\n  WAREHOUSE:\n    url: ${db.url}\n` });
});
after(async () => {
  await browser?.close();
  await d?.close();
  await db?.drop();
});

async function ready(t: TestContext): Promise<{ b: Browser; d: UiDaemon; db: TempDatabase } | undefined> {
  if (!(await requirePg(t))) return undefined;
  browser ??= await requireBrowser(t);
  return browser && d && db ? { b: browser, d, db } : undefined;
}

async function runFromJobsPage(page: Page, d: UiDaemon, file: string): Promise<void> {
  await page.goto(`${d.url}/ui/jobs`);
  const row = page.locator('tr', { has: page.locator('a', { hasText: file }) });
  await Promise.all([page.waitForURL(/\/ui\/executions\/[0-9A-Za-z]+$/), row.getByRole('button', { name: 'Run' }).click()]);
}

test('a PostgreSQL query job run from the Jobs page: running → success, its log lines appearing live while it runs', async (t) => {
  const r = await ready(t);
  if (!r) return;
  const { b, d } = r;
  await saveFile(d, d.acme, 'queries/slow.sql', '-- connection: WAREHOUSE\nselect pg_sleep(1);\nselect 42 as answer;\nselect pg_sleep(3);\n');
  const { page, context } = await signIn(b, d, d.acme);
  await runFromJobsPage(page, d, 'queries/slow.sql');
  const execId = page.url().split('/').at(-1)!;
  // Without a reload: the status and the lines come over the event stream.
  let reloaded = false;
  page.on('load', () => (reloaded = true));
  // The executions list, open meanwhile in another tab, follows the active row by itself.
  const list = await context.newPage();
  await list.goto(`${d.url}/ui/executions`);
  let listReloaded = false;
  list.on('load', () => (listReloaded = true));
  const stageOf = (wanted: string) =>
    page.waitForFunction(
      (w) => {
        const status = (globalThis as unknown as { document: PageDocument }).document.querySelector('[data-exec-status]')?.textContent;
        const log = (globalThis as unknown as { document: PageDocument }).document.querySelector('[data-log]')?.textContent ?? '';
        return status === 'running' && log.includes(w);
      },
      wanted,
      { timeout: 30_000 },
    );
  await stageOf('statement 1/3: select pg_sleep(1)');
  await stageOf('statement 3/3: select pg_sleep(3)');
  const whileRunning = (await page.locator('[data-log]').textContent()) ?? '';
  assert.match(whileRunning, /statement 2\/3: 1 row\(s\)/, 'earlier lines are there while the last statement runs');
  assert.ok(!whileRunning.includes('statement 3/3: 1 row(s)'));
  await screenshots(page, 'execution-running');
  await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.querySelector('[data-exec-status]')?.textContent === 'success', undefined, { timeout: 30_000 });
  await page.waitForFunction(() => ((globalThis as unknown as { document: PageDocument }).document.querySelector('[data-log]')?.textContent ?? '').includes('statement 3/3: 1 row(s)'));
  const log = (await page.locator('[data-log]').textContent()) ?? '';
  assert.equal(log.match(/statement 1\/3: select pg_sleep/g)?.length, 1, 'no line shown twice');
  assert.match(log, /statement 3\/3: 1 row\(s\)\npg_sleep\n-+\n/, "the last result as a table");
  assert.equal(await page.locator('[data-cancel]').count(), 0, 'no Cancel once it ended');
  assert.equal(reloaded, false);
  await screenshots(page, 'execution');
  await list.waitForFunction((id) => (globalThis as unknown as { document: PageDocument }).document.querySelector(`tr[data-exec="${id}"] .status`)?.textContent === 'success', execId, { timeout: 15_000 });
  assert.equal(listReloaded, false);
  await context.close();
});

test('cancel a running pg_sleep(30) job from its page: cancelled within seconds, no backend left', async (t) => {
  const r = await ready(t);
  if (!r) return;
  const { b, d, db } = r;
  await saveFile(d, d.acme, 'queries/sleepy.sql', '-- connection: WAREHOUSE\nselect pg_sleep(30);\n');
  const { page, context } = await signIn(b, d, d.acme);
  await runFromJobsPage(page, d, 'queries/sleepy.sql');
  const execId = page.url().split('/').at(-1)!;
  await page.waitForFunction(
    () => (globalThis as unknown as { document: PageDocument }).document.querySelector('[data-exec-status]')?.textContent === 'running' && ((globalThis as unknown as { document: PageDocument }).document.querySelector('[data-log]')?.textContent ?? '').includes('statement 1/1'),
    undefined,
    { timeout: 30_000 },
  );
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    const sleeping = async () => (await admin.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like '%pg_sleep(30)%' and state = 'active'")).rows[0].n as number;
    await eventually(async () => ((await sleeping()) === 1 ? true : undefined), 10_000, 'the pg_sleep backend');
    await Promise.all([page.waitForURL(`${d.url}/ui/executions/${execId}`), page.getByRole('button', { name: 'Cancel' }).click()]);
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.querySelector('[data-exec-status]')?.textContent === 'cancelled', undefined, { timeout: 5_000 });
    await eventually(async () => ((await sleeping()) === 0 ? true : undefined), 5_000, 'no pg_sleep backend left');
  } finally {
    await admin.end();
  }
  const [exec] = (await api(d, d.acme, 'GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: execId }))}`)).executions;
  assert.equal(exec.status, 'cancelled');
  await context.close();
});
