/**
 * API load benchmark (issue: daemon acceptance 4; bench item 4): a real
 * daemon process with 100,000 executions stored, then 50 concurrent
 * keep-alive clients on loopback for a bounded time against
 * `GET /execution/list?limit=100` and `POST /project/file/save`. Prints
 * requests/s and p50/p99 latency. The load stays on 127.0.0.1 and stops by
 * itself (time- and count-bounded).
 *
 *   node --import tsx bench/api/api-load.ts [--seconds 10] [--clients 50] [--executions 100000]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli/main.js';
import { openStateStore } from '../../engine/state/open-state-store.js';
import type { NewExecution } from '../../engine/state/store.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('seconds', 10);
const CLIENTS = arg('clients', 50);
const EXECUTIONS = arg('executions', 100_000);
const MAX_REQUESTS = 2_000_000; // hard stop whatever the speed

async function cli(...argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { out: (t) => (out += t), err: () => {} });
  if (code !== 0) throw new Error(`service ${argv.join(' ')} exited ${code}`);
  return out.trim();
}

async function seed(dataDir: string, projectId: string): Promise<void> {
  const store = await openStateStore(join(dataDir, 'state.db'));
  const job = await store.createJob({
    project_id: projectId, name: 'bench', type: 'query', file_name: 'q.sql', description: '', active: false, default: false,
    streams: [], tags: [], schedules: [], timezone: 'UTC', policy: 'queue', config: { mode: null, threads: 1, vars: {}, timeout: 0, retries: 0 },
  });
  const start = Date.parse('2025-01-01T00:00:00Z');
  for (let b = 0; b < EXECUTIONS; b += 10_000) {
    const batch: NewExecution[] = [];
    for (let i = b; i < Math.min(EXECUTIONS, b + 10_000); i++) {
      const t = new Date(start + i * 1000).toISOString();
      batch.push({ project_id: projectId, job_id: job.id, job_name: 'bench', job_type: 'query', file_name: 'q.sql', trigger: 'api', status: 'success', start_time: t, end_time: t, rows: i % 100, bytes: 0 });
    }
    await store.insertExecutionsBulk(batch);
  }
  await store.close();
}

interface Result {
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
}

async function load(url: URL, method: 'GET' | 'POST', headers: Record<string, string>, body: (i: number) => string | undefined): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const b = body(i);
      const req = http.request(url, { method, agent, headers: { ...headers, ...(b ? { 'Content-Length': Buffer.byteLength(b) } : {}) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(b);
    });
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < deadline && sent < MAX_REQUESTS) await one(sent++);
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { requests: latencies.length, errors, seconds: (performance.now() - started) / 1000, p50: pct(50), p99: pct(99) };
}

export async function runApiLoad(): Promise<{ list: Result; save: Result }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-apiload-'));
  const projectId = await cli('project', 'create', 'bench', '--data-dir', dataDir);
  const token = await cli('token', 'create', '--project', 'bench', '--data-dir', dataDir);
  await seed(dataDir, projectId);
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'service.js');
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SERVICE_LOGGING: 'JSON' } });
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let log = '';
      child.stderr!.on('data', (b: Buffer) => {
        log += b.toString();
        const m = /listening on (http:\/\/[^\s"]+)/.exec(log);
        if (m) resolve(m[1]!);
        if (log.length > 1_000_000) log = log.slice(-10_000); // request log lines pile up under load
      });
      child.on('exit', () => reject(new Error(`daemon exited:\n${log}`)));
    });
    const auth = { Authorization: `Service-Project-Token ${token}` };
    const list = await load(new URL('/execution/list?limit=100', base), 'GET', auth, () => undefined);
    const save = await load(new URL('/project/file/save', base), 'POST', { ...auth, 'Content-Type': 'application/json' }, (i) =>
      JSON.stringify({ file: { name: `load/f${i % 500}.txt`, body: `body ${i}\n` } }),
    );
    return { list, save };
  } finally {
    child.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runApiLoad();
  for (const [name, x] of Object.entries(r)) {
    console.log(`${name === 'list' ? 'GET /execution/list?limit=100' : 'POST /project/file/save'}  ${CLIENTS} clients ${x.seconds.toFixed(1)} s: ${(x.requests / x.seconds).toFixed(0)} req/s, p50 ${x.p50.toFixed(1)} ms, p99 ${x.p99.toFixed(1)} ms, errors ${x.errors}`);
  }
  process.exit(0);
}
