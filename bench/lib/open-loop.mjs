// The open-loop load generator of the API suite, run as a process of its own
// so that on two cores it competes with the server only as any client would,
// and nothing else of the bench runs in its event loop. Request i is
// scheduled at start + i / rate whatever the answers so far (open loop: a
// slow server gets more requests in flight, not fewer), and its latency is
// measured from that scheduled time, so queueing — in the server, in the
// kernel, or waiting for a connection — is counted. Keep-alive connections,
// opened as the load needs them; an untimed warm-up at the same rate first.
// Usage: node bench/lib/open-loop.mjs <config.json>; prints a JSON result.
//   config: { base, rate, seconds, warmup, method, headers, paths: [...], bodies?: [...], pid? }
//   (request i uses paths[i % paths.length] and bodies[i % bodies.length])
import { readFileSync } from 'node:fs';
import http from 'node:http';

const c = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { hostname, port } = new URL(c.base);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** Sends `rate`/s for `seconds` from request number `first`; resolves when every answer arrived. */
function phase(first, seconds) {
  const total = Math.round(c.rate * seconds);
  const latencies = [];
  const lags = [];
  let errors = 0;
  let sent = 0;
  let answered = 0;
  const start = performance.now() + 5;
  return new Promise((resolve) => {
    let done = false;
    const end = () => {
      done = true;
      clearTimeout(deadline);
      resolve({ latencies, lags, errors, elapsed: (performance.now() - start) / 1000 });
    };
    // Bounded: a server far slower than the rate would otherwise keep the bench waiting for minutes.
    // What is unanswered 30 s after the last send counts as errors (no latency: the p99 is of answers).
    const deadline = setTimeout(() => {
      errors += total - answered;
      for (const s of Object.values(agent.sockets).flat()) s.destroy();
      end();
    }, seconds * 1000 + 30_000);
    const finish = () => {
      if (done) return;
      if (++answered === total) end();
    };
    const send = (i, at) => {
      const n = first + i;
      const body = c.bodies ? c.bodies[n % c.bodies.length] : undefined;
      const headers = { ...c.headers, ...(body !== undefined ? { 'Content-Length': Buffer.byteLength(body) } : {}) };
      lags.push(performance.now() - at);
      const req = http.request({ hostname, port, path: c.paths[n % c.paths.length], method: c.method, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - at);
          finish();
        });
      });
      req.on('error', () => {
        errors++;
        latencies.push(performance.now() - at);
        finish();
      });
      req.end(body);
    };
    const pump = () => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / c.rate <= now) {
        send(sent, start + (sent * 1000) / c.rate);
        sent++;
      }
      if (sent < total) setTimeout(pump, Math.max(0, start + (sent * 1000) / c.rate - performance.now()));
    };
    setTimeout(pump, 5);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
if (c.warmup > 0) await phase(0, c.warmup);
const cpu0 = c.pid ? cpuMsOf(c.pid) : 0;
const r = await phase(Math.round(c.rate * c.warmup), c.seconds);
const cpu = c.pid ? cpuMsOf(c.pid) - cpu0 : 0;
agent.destroy();
r.latencies.sort((a, b) => a - b);
r.lags.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    requests: r.latencies.length,
    errors: r.errors,
    seconds: r.elapsed,
    perSecond: r.latencies.length / r.elapsed,
    p50: pct(r.latencies, 50),
    p99: pct(r.latencies, 99),
    max: r.latencies[r.latencies.length - 1] ?? 0,
    serverCpuMsPerRequest: r.latencies.length > 0 ? cpu / r.latencies.length : 0,
    senderLagP99: pct(r.lags, 99),
  }) + '\n',
);
