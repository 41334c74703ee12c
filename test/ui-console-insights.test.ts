// Where the time went, in a real browser (Debian's Chromium through
// playwright-core) against the real daemon wiring: the Gantt chart and
// table of a pipeline's build nodes (drawn when a live execution ends, each
// node after its dependencies, with its thread and rows as stored), a job's
// run-history chart, search from the header over jobs, files and
// executions, a lineage node's page (a real heading, its recent runs) and
// lineage zoom and focus; a PostgreSQL build with 4 threads shows nodes
// running at the same time. Screenshots go to SCREENSHOT_DIR.
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { eventually } from './helpers/api-server.js';
import path from 'node:path';
import { requireBrowser, SCREENSHOT_DIR, screenshots } from './helpers/browser.js';
import { createTempDatabase, pgAvailable, requirePg, type TempDatabase } from './helpers/pg.js';
import { startUiDaemon, type UiDaemon } from './helpers/ui-daemon.js';
import { api, saveFile, signIn } from './helpers/ui-session.js';

const DIR = 'insights/shop';
const MODELS: Record<string, string> = {
  raw_orders: 'select * from (values (1, 1, 10), (2, 1, 20), (3, 2, 30)) t(id, customer_id, amount)',
  raw_customers: "select * from (values (1, 'ann'), (2, 'bob')) t(id, name)",
  stg_orders: "select * from {{ ref('raw_orders') }}",
  stg_customers: "select * from {{ ref('raw_customers') }}",
  fct_orders: "select o.id, c.name, o.amount from {{ ref('stg_orders') }} o join {{ ref('stg_customers') }} c on c.id = o.customer_id",
  report: "select name, sum(amount) as total from {{ ref('fct_orders') }} group by name",
  unrelated: 'select 42 as answer',
};
const EDGES = [
  ['raw_orders', 'stg_orders'],
  ['raw_customers', 'stg_customers'],
  ['stg_orders', 'fct_orders'],
  ['stg_customers', 'fct_orders'],
  ['fct_orders', 'report'],
] as const;

let d: UiDaemon;
let db: TempDatabase | undefined;
let browser: Browser | undefined;
let jobId = '';
const runs: string[] = [];

before(async () => {
  if (await pgAvailable()) db = await createTempDatabase('ui_insights');
  const warehouse = db ? `  WAREHOUSE:\n    url: ${db.url}\n` : '';
  d = await startUiDaemon({ acmeEnv: `connections:\n  LAKE:\n    type: duckdb\n    instance: lake.duckdb\n${warehouse}` });
  await saveFile(d, d.acme, `${DIR}/service_build.yml`, 'target: LAKE\n');
  for (const [name, sql] of Object.entries(MODELS)) await saveFile(d, d.acme, `${DIR}/${name}.sql`, `${sql}\n`);
  await saveFile(d, d.acme, 'insights/shop_pipeline.yaml', `steps:\n  - id: transform\n    build: ${DIR}\n`);
  [{ id: jobId }] = (await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'insights/shop_pipeline.yaml' })).jobs;
});
after(async () => {
  await browser?.close();
  await d?.close();
  await db?.drop();
});

async function ready(t: TestContext): Promise<Browser | undefined> {
  browser ??= await requireBrowser(t);
  return browser;
}

/** A picture of one part of the page (docs/web-console.md shows these), beside the full-page screenshots. */
const part = (page: Page, selector: string, name: string) => page.locator(selector).first().screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });

async function execution(execId: string): Promise<any> {
  return (await api(d, d.acme, 'GET', `/execution/list?filters=${encodeURIComponent(JSON.stringify({ exec_id: execId }))}`)).executions[0];
}

/** Runs the job through the API and waits until it ended; returns the execution. */
async function runToEnd(job: string): Promise<any> {
  const { exec_id } = await api(d, d.acme, 'POST', '/project/job/run', { job_id: job });
  return eventually(async () => {
    const e = await execution(exec_id);
    return e && !['queued', 'running'].includes(e.status) ? e : undefined;
  }, 60_000, `execution ${exec_id} to end`);
}

interface Bar {
  name: string;
  status: string;
  thread: string;
  start?: number;
  duration?: number;
}

const bars = (page: Page, step = 'transform'): Promise<Bar[]> =>
  page.locator(`[data-build-step="${step}"] svg.gantt g.bar`).evaluateAll((els) =>
    els.map((e) => ({
      name: e.getAttribute('data-name') ?? '',
      status: e.getAttribute('data-status') ?? '',
      thread: e.getAttribute('data-thread') ?? '',
      ...(e.hasAttribute('data-start-ms') ? { start: Number(e.getAttribute('data-start-ms')), duration: Number(e.getAttribute('data-duration-ms')) } : {}),
    })),
  );

test('an execution page draws its build nodes when the live run ends: a Gantt bar per node, each after its dependencies, and a table with the stored status, rows and thread', async (t) => {
  const b = await ready(t);
  if (!b) return;
  const { page, context, dialogs } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/jobs/${jobId}`);
  await Promise.all([page.waitForURL(/\/ui\/executions\/[0-9A-Za-z]+$/), page.click('text=Run now')]);
  const execId = page.url().split('/').at(-1)!;
  runs.push(execId);
  let reloaded = false;
  page.on('load', () => (reloaded = true));
  // The chart arrives with the end of the execution, without a reload.
  await page.waitForSelector('[data-build-step="transform"] svg.gantt', { timeout: 60_000 });
  assert.equal(await page.locator('[data-exec-status]').textContent(), 'success');
  assert.equal(reloaded, false);

  const drawn = await bars(page);
  assert.deepEqual(drawn.map((x) => x.name.replace(/^main\.|^public\./, '')).sort(), Object.keys(MODELS).sort());
  const byShort = new Map(drawn.map((x) => [x.name.split('.').at(-1)!, x]));
  for (const x of drawn) {
    assert.equal(x.status, 'success', x.name);
    assert.ok(x.start !== undefined && x.start >= 0, `${x.name} has a start`);
    assert.match(x.thread, /^\d+$/, `${x.name} names its thread`);
  }
  // Bars in start order, and no node starts before its dependencies ended (times kept to the millisecond).
  assert.deepEqual(drawn.map((x) => x.start), [...drawn.map((x) => x.start!)].sort((p, q) => p - q));
  for (const [from, to] of EDGES) {
    const dep = byShort.get(from)!;
    const child = byShort.get(to)!;
    assert.ok(child.start! >= dep.start! + dep.duration! - 2, `${to} (at ${child.start} ms) starts after ${from} ended (${dep.start! + dep.duration!} ms)`);
  }

  // The table says what the store says.
  const stored = await execution(execId);
  const results = stored.build.results as { name: string; status: string; rows: number; thread: number; start_time: string }[];
  assert.equal(results.length, 7);
  for (const r of results) {
    assert.match(r.start_time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, `${r.name}: start_time stored`);
    const row = page.locator(`[data-build-step="transform"] tr[data-node="${r.name}"]`);
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[2]!.trim(), r.status, r.name);
    assert.equal(cells[5]!.trim(), String(r.rows), `${r.name} rows`);
    assert.equal(cells[6]!.trim(), String(r.thread), `${r.name} thread`);
    assert.match(cells[3]!, /^\+\d+\.\d\d s$/, `${r.name} start offset`);
  }
  assert.match((await page.locator('[data-build-summary]').textContent()) ?? '', /7 node\(s\) on 1 thread\(s\)/);
  await screenshots(page, 'insights-execution-gantt');
  assert.deepEqual(dialogs, []);
  await context.close();
});

test("a job's page charts its last runs: one bar per run, oldest first, coloured by status and linking to the execution", async (t) => {
  const b = await ready(t);
  if (!b) return;
  if (runs.length === 0) runs.push((await runToEnd(jobId)).exec_id);
  runs.push((await runToEnd(jobId)).exec_id);
  // The third run fails: report reads a table that does not exist.
  await saveFile(d, d.acme, `${DIR}/report.sql`, 'select * from missing_table_xyz\n');
  const failed = await runToEnd(jobId);
  assert.equal(failed.status, 'error');
  runs.push(failed.exec_id);

  const { page, context } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/jobs/${jobId}`);
  const chart = page.locator('[data-history] svg.history g.run');
  assert.deepEqual(await chart.evaluateAll((els) => els.map((e) => [e.getAttribute('data-exec'), e.getAttribute('data-status')])), [
    [runs[0], 'success'],
    [runs[1], 'success'],
    [runs[2], 'error'],
  ]);
  const stored = await Promise.all(runs.map(execution));
  const heights = await chart.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-duration-ms'))));
  assert.deepEqual(heights, stored.map((e) => Math.round(e.duration * 1000)), 'bar values are the stored durations');
  const fills = await page.locator('[data-history] svg.history g.run rect').evaluateAll((els) => els.map((e) => e.getAttribute('fill')));
  assert.equal(fills[0], fills[1]);
  assert.notEqual(fills[2], fills[0], 'the failed run has its own colour');
  await screenshots(page, 'insights-job-history');
  await part(page, 'section:has([data-history])', 'part-job-history');
  await page.locator('[data-history] a').nth(2).click();
  await page.waitForURL(`${d.url}/ui/executions/${runs[2]}`);
  // The failed run's Gantt: report failed, the others ran.
  const drawn = await bars(page);
  assert.equal(drawn.find((x) => x.name.endsWith('report'))?.status, 'error');
  assert.equal(drawn.filter((x) => x.status === 'success').length, 6);
  await context.close();
});

test('search from the header finds jobs, files and executions; a full execution id finds it; nothing found says so; an overlong text is refused', async (t) => {
  const b = await ready(t);
  if (!b) return;
  if (runs.length < 3) return t.skip('needs the runs of the previous tests');
  const { page, context, dialogs } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/files`);
  await page.fill('header input[name=q]', 'shop');
  await Promise.all([page.waitForURL(/\/ui\/search\?q=shop$/), page.press('header input[name=q]', 'Enter')]);
  assert.equal(await page.locator(`[data-results="jobs"] tr[data-job="${jobId}"]`).count(), 1);
  const files = await page.locator('[data-results="files"] [data-file]').evaluateAll((els) => els.map((e) => e.getAttribute('data-file')));
  assert.deepEqual(files.sort(), ['insights/shop/service_build.yml', ...Object.keys(MODELS).map((m) => `insights/shop/${m}.sql`), 'insights/shop_pipeline.yaml'].sort());
  const execs = await page.locator('[data-results="executions"] tr[data-exec]').evaluateAll((els) => els.map((e) => e.getAttribute('data-exec')));
  assert.deepEqual([...execs].sort(), [...runs].sort(), 'executions by job name');
  await screenshots(page, 'insights-search');
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'part-search.png') });

  await page.goto(`${d.url}/ui/search?q=${runs[1]}`);
  assert.deepEqual(await page.locator('[data-results="executions"] tr[data-exec]').evaluateAll((els) => els.map((e) => e.getAttribute('data-exec'))), [runs[1]]);
  assert.equal(await page.locator('[data-results="files"] [data-file]').count(), 0);
  // Words of an error message.
  await page.goto(`${d.url}/ui/search?q=missing_table_xyz`);
  assert.deepEqual(await page.locator('[data-results="executions"] tr[data-exec]').evaluateAll((els) => els.map((e) => e.getAttribute('data-exec'))), [runs[2]]);
  await page.goto(`${d.url}/ui/search?q=${encodeURIComponent('<nothing-like-this>')}`);
  assert.match((await page.locator('main').textContent()) ?? '', /No job matches\.[\s\S]*No file matches\.[\s\S]*No execution matches\./);
  assert.equal(await page.locator('header input[name=q]').inputValue(), '<nothing-like-this>', 'the box keeps the text, as text');
  const res = await page.goto(`${d.url}/ui/search?q=${'x'.repeat(201)}`);
  assert.equal(res?.status(), 400);
  assert.match((await page.locator('[role=alert]').textContent()) ?? '', /201 characters long; at most 200/);
  assert.deepEqual(dialogs, []);
  await context.close();
});

test("a node's page has a real heading and its recent runs; the lineage zooms and focuses on a node's up- and downstream", async (t) => {
  const b = await ready(t);
  if (!b) return;
  if (runs.length < 3) return t.skip('needs the runs of the previous tests');
  const { page, context } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/lineage/node?dir=${encodeURIComponent(DIR)}&name=report`);
  const h1 = page.locator('main h1.node-title');
  assert.match(((await h1.textContent()) ?? '').replace(/\s+/g, ' ').trim(), /^report model · full-refresh error$/, 'name, kind, mode and last status');
  const look = await h1.evaluate((e) => {
    const s = (globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string; fontFamily: string } }).getComputedStyle(e);
    return { size: parseFloat(s.fontSize), family: s.fontFamily };
  });
  assert.ok(look.size >= 24, `heading is ${look.size}px`);
  assert.doesNotMatch(look.family, /monospace/, 'not code text');
  assert.equal(await page.locator('main h1 code').count(), 0);
  // Newest first in the table, oldest first in the chart.
  const table = await page.locator('[data-node-runs] tr[data-run]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-run'), e.querySelector('.status')?.textContent]));
  assert.deepEqual(table, [
    [runs[2], 'error'],
    [runs[1], 'success'],
    [runs[0], 'success'],
  ]);
  const chart = await page.locator('[data-node-runs] svg.history g.run').evaluateAll((els) => els.map((e) => e.getAttribute('data-exec')));
  assert.deepEqual(chart, runs);
  const stored = (await execution(runs[1]!)).build.results.find((r: { name: string }) => r.name.endsWith('report'));
  const cells = await page.locator(`[data-node-runs] tr[data-run="${runs[1]}"] td`).allTextContents();
  assert.equal(cells[4]!.trim(), String(stored.rows), 'rows as stored');
  await screenshots(page, 'insights-node');
  await page.setViewportSize({ width: 1100, height: 640 });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'part-node.png') });

  // Focus: stg_orders with its ancestors and descendants only (report reads fct_orders again).
  await saveFile(d, d.acme, `${DIR}/report.sql`, `${MODELS.report}\n`);
  await page.goto(`${d.url}/ui/lineage/node?dir=${encodeURIComponent(DIR)}&name=stg_orders`);
  await Promise.all([page.waitForURL(/\/ui\/lineage\/graph\?dir=.*&focus=stg_orders$/), page.click('[data-focus-link]')]);
  const names = () => page.locator('svg.lineage g.node').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')).sort());
  assert.deepEqual(await names(), ['fct_orders', 'raw_orders', 'report', 'stg_orders']);
  assert.match((await page.locator('[data-focus]').textContent()) ?? '', /4 of 7 nodes/);
  await screenshots(page, 'insights-lineage-focus');
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'part-lineage-focus.png') });
  // Zoom keeps the focus and scales the drawing.
  const width = async () => Number(await page.locator('svg.lineage').getAttribute('width'));
  const base = await width();
  await Promise.all([page.waitForURL(/zoom=150$/), page.click('[data-zoom-in]')]);
  assert.equal(await page.locator('[data-zoom]').textContent(), '150%');
  assert.ok(Math.abs((await width()) - base * 1.5) < 0.2, 'drawn 1.5× as wide');
  assert.equal((await names()).length, 4, 'still focused');
  await Promise.all([page.waitForURL(/zoom=100$|focus=stg_orders$/), page.click('[data-zoom-out]')]);
  await Promise.all([page.waitForURL(/zoom=fit$/), page.click('[data-zoom-fit]')]);
  assert.equal(await page.locator('svg.lineage').getAttribute('width'), '100%');
  await page.click('text=Show the whole lineage');
  assert.equal((await names()).length, 7);
  const bad = await page.goto(`${d.url}/ui/lineage/graph?dir=${encodeURIComponent(DIR)}&zoom=7`);
  assert.equal(bad?.status(), 400);
  assert.match((await page.locator('[role=alert]').textContent()) ?? '', /zoom must be fit or one of 25, 50, 75, 100, 150, 200/);
  const missing = await page.goto(`${d.url}/ui/lineage/graph?dir=${encodeURIComponent(DIR)}&focus=nope`);
  assert.equal(missing?.status(), 404);
  await context.close();
});

test('a PostgreSQL build with 4 threads: the Gantt shows nodes running at the same time, and the last node after all of them', async (t) => {
  if (!(await requirePg(t))) return;
  const b = await ready(t);
  if (!b) return;
  const dir = 'insights/wide';
  await saveFile(d, d.acme, `${dir}/service_build.yml`, 'target: WAREHOUSE\n');
  const parts = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
  // Each part takes a while in the database, so parallel parts overlap whatever the machine.
  for (const p of parts) await saveFile(d, d.acme, `${dir}/${p}.sql`, `select 1 as n from (select pg_sleep(0.4)) s\n`);
  await saveFile(d, d.acme, `${dir}/total.sql`, `${parts.map((p) => `select n from {{ ref('${p}') }}`).join('\nunion all\n')}\n`);
  await saveFile(d, d.acme, 'insights/wide_pipeline.yaml', `steps:\n  - id: wide\n    build: ${dir}\n    threads: 4\n`);
  const [job] = (await api(d, d.acme, 'POST', '/project/job/list', { file_name: 'insights/wide_pipeline.yaml' })).jobs;
  const done = await runToEnd(job.id);
  assert.equal(done.status, 'success', done.error);
  const { page, context } = await signIn(b, d, d.acme);
  await page.goto(`${d.url}/ui/executions/${done.exec_id}`);
  const drawn = await bars(page, 'wide');
  assert.equal(drawn.length, 7);
  const spans = drawn.map((x) => ({ name: x.name, from: x.start!, to: x.start! + x.duration! }));
  const overlapping = spans.filter((a) => spans.some((o) => o !== a && o.from < a.to && a.from < o.to)).length;
  assert.ok(overlapping >= 2, `nodes overlap in time: ${JSON.stringify(spans)}`);
  const total = spans.find((s) => s.name.endsWith('total'))!;
  for (const s of spans) if (s !== total) assert.ok(total.from >= s.to - 2, `total starts after ${s.name}`);
  assert.match((await page.locator('[data-build-step="wide"] [data-build-summary]').textContent()) ?? '', /7 node\(s\)[\s\S]*× parallel/);
  await screenshots(page, 'insights-execution-gantt-parallel');
  await part(page, '[data-build-step="wide"]', 'part-gantt');
  await context.close();
});
