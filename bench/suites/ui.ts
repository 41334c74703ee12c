/**
 * Suite 6 — web console. A real daemon (`service serve`, SQLite state store)
 * with 100,000 executions stored (10,000 in --quick) and one signed-in
 * console session; 20 keep-alive clients in a closed loop for 10 s (2 s in
 * --quick) after a short untimed warm-up, each on:
 *   - `GET /ui/executions` — the first page (50 rows, filters, pager);
 *   - `GET /ui/executions?after=…` — a page in the middle of the 100,000
 *     (keyset paging: it must cost what the first page costs);
 * and, as the baseline on the same daemon in the same run, the same 50
 * executions as JSON from the API (`GET /execution/list?limit=50`).
 *
 * "Server time" is what the daemon's own request log says each answer took
 * (from the request's arrival in the handler to the rendered page) — the
 * render cost without the queueing of 20 clients on 2 cores, which the
 * client-side latency shows as well. Ratio = API requests/s ÷ ours.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { int, ms, type Row } from '../lib/report.js';
import { CLI, runCli } from '../lib/spawn-timed.js';
import type { SuiteContext } from '../lib/suite-context.js';
import { load, startServer, type LoadResult } from '../lib/http-load.js';
import { seedExecutions } from '../lib/list-queries.js';

export const UI_P99_TARGET_MS = 20;
const CLIENTS = 20;

interface Phase extends LoadResult {
  /** Server-side times of the timed and warm-up answers, from the request log (ms). */
  readonly serverP50: number;
  readonly serverP99: number;
  readonly logged: number;
}

/** Signs in through the form like a browser: the session cookie to send. */
async function session(url: string, token: string): Promise<string> {
  const form = await fetch(`${url}/ui/sign-in`);
  const signinCookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error('ui bench: no CSRF token on the sign-in form');
  const res = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: signinCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token, next: '/ui' }).toString(),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('service_session='));
  if (res.status !== 303 || !cookie) throw new Error(`ui bench: sign-in answered ${res.status}`);
  return cookie.split(';')[0]!;
}

const pct = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Server-side durations of `GET <path>` lines logged after byte `from` of the daemon log. */
function serverTimes(logFile: string, from: number, path: string): number[] {
  const text = readFileSync(logFile, 'utf8').slice(from);
  const re = new RegExp(`"msg":"GET ${path.replace(/[/.]/g, '\\$&')} 200 ([0-9.]+)ms`, 'g');
  return [...text.matchAll(re)].map((m) => Number(m[1])).sort((a, b) => a - b);
}

export async function uiRender(ctx: SuiteContext): Promise<Row[]> {
  const executions = ctx.quick ? 10_000 : 100_000;
  const seconds = ctx.quick ? 2 : 10;
  const warmup = ctx.quick ? 0.3 : 1;
  const dataDir = join(ctx.work, 'ui-daemon');
  ctx.progress(`ui: project, token and ${int(executions)} executions`);
  const projectId = (await runCli(['project', 'create', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  const token = (await runCli(['token', 'create', '--project', 'bench', '--data-dir', dataDir], { env: ctx.cliEnv })).stdout.trim();
  await seedExecutions(join(dataDir, 'state.db'), projectId, executions);
  const logFile = join(ctx.work, 'ui-daemon.log');
  const daemon = await startServer(CLI, ['serve', '--data-dir', dataDir, '--port', '0'], ctx.cliEnv, logFile);
  const phases: Record<'first' | 'middle' | 'api', Phase> = {} as never;
  try {
    const cookie = await session(daemon.url, token);
    // The middle of the list: the cursor the pager would put in its "Older" link there.
    const middle = await fetch(`${daemon.url}/execution/list?limit=1&filters=${encodeURIComponent(JSON.stringify({ period: ['2025-01-01T00:00:00Z', new Date(Date.parse('2025-01-01T00:00:00Z') + (executions / 2) * 1000).toISOString()] }))}`, { headers: { authorization: `Service-Project-Token ${token}` } });
    const [mid] = ((await middle.json()) as { executions: { start_time: string; exec_id: string }[] }).executions;
    if (!mid) throw new Error('ui bench: no execution in the middle of the list');
    const runs: [keyof typeof phases, string, Record<string, string>, string][] = [
      ['first', '/ui/executions', { cookie }, '/ui/executions'],
      ['middle', `/ui/executions?after=${encodeURIComponent(`${mid.start_time}_${mid.exec_id}`)}`, { cookie }, '/ui/executions'],
      ['api', '/execution/list?limit=50', { authorization: `Service-Project-Token ${token}` }, '/execution/list'],
    ];
    for (const [name, path, headers, logged] of runs) {
      ctx.progress(`ui: GET ${path.slice(0, 60)}, ${CLIENTS} clients, ${seconds} s`);
      const from = statSync(logFile).size;
      const r = await load(daemon.url, new URL(path, daemon.url), { method: 'GET', headers, seconds, warmup, clients: CLIENTS, ...(daemon.child.pid ? { pid: daemon.child.pid } : {}) });
      await new Promise((res) => setTimeout(res, 200)); // the batched request log reaches the file
      const times = serverTimes(logFile, from, logged);
      phases[name] = { ...r, serverP50: pct(times, 50), serverP99: pct(times, 99), logged: times.length };
    }
  } finally {
    await daemon.stop();
  }
  const describe = (p: Phase) => `server p50 ${ms(p.serverP50)} · p99 ${ms(p.serverP99)}; clients see ${int(p.perSecond)} req/s · p99 ${ms(p.p99)} · ${int(p.errors)} errors`;
  const row = (id: string, label: string, p: Phase): Row => {
    const met = p.serverP99 <= UI_P99_TARGET_MS && p.errors === 0;
    return {
      id,
      label,
      ours: describe(p),
      baseline: `same rows as API JSON: ${describe(phases.api)}`,
      ratio: p.perSecond > 0 ? phases.api.perSecond / p.perSecond : null,
      target: {
        text: `server p99 ≤ ${UI_P99_TARGET_MS} ms at ${CLIENTS} clients`,
        met: ctx.quick ? null : met,
        ...(!ctx.quick && !met ? { miss: p.errors > 0 ? `${int(p.errors)} errors` : `+${ms(p.serverP99 - UI_P99_TARGET_MS)}` } : {}),
      },
      data: { clients: CLIENTS, seconds, executions, ours: p, api: phases.api },
    };
  };
  return [
    row('ui.executions-first-page', `web console: GET /ui/executions (50 of ${int(executions)} executions), ${CLIENTS} clients`, phases.first),
    row('ui.executions-middle-page', `web console: GET /ui/executions?after=… (page in the middle), ${CLIENTS} clients`, phases.middle),
  ];
}
