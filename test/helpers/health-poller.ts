/**
 * A worker thread that polls `GET /health` every `intervalMs` until told to
 * stop, then posts every answer's latency and the non-200 statuses. On its
 * own thread the client's work never delays an answer: a slow one was slow
 * in the daemon (or the machine).
 */
import { request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, intervalMs } = workerData as { url: string; intervalMs: number };
let stopped = false;
parentPort!.once('message', () => (stopped = true));

function health(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function poll(): Promise<void> {
  const latencies: number[] = [];
  const failures: string[] = [];
  while (!stopped) {
    const started = performance.now();
    const status = await health().catch((err: Error) => `error ${err.message}`);
    latencies.push(performance.now() - started);
    if (status !== 200) failures.push(`/health answered ${status}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  parentPort!.postMessage({ latencies, failures });
}

// Loaded through `require` under tsx (engine/lazy-import.ts, workerEntryUrl): no top-level await.
void poll();
