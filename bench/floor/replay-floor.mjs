// The floor of the run-overhead benchmark (bench suite 2) and of the DAG
// suite's ideal: the driver calls our engine made for a run (recorded by
// lib/sql-replay.ts), replayed with the same driver, in the same dependency
// order and with the same concurrency, with nothing of ours in between — one
// plain client per slot (`pg.Client` with the engine's client config; one
// DuckDB connection), a FIFO ready queue in DAG order, and per node its
// recorded calls sent exactly as the driver sends them (one simple-query round
// trip per batch on PostgreSQL, results read into JS values on DuckDB).
//
// Plain JavaScript, so that run as a program it starts like the compiled CLI
// does: `node bench/floor/replay-floor.mjs <recording.json> <threads> [duckdb file]`
// loads the driver, connects, replays and exits — a program doing the same
// physical work as `service build run`, timed from spawn to exit like ours.
// The suites also import `replayPostgres` / `replayDuckdb` to replay in their
// own (warm) process.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Runs `run(i, slot)` for every node once its parents finished, at most
 * `concurrency` at a time, starting ready nodes in FIFO order (ties in DAG
 * order) — the policy of our supervisor, without its messages.
 */
export function scheduleDag(deps, concurrency, run) {
  const n = deps.length;
  const waiting = deps.map((d) => d.length);
  const children = deps.map(() => []);
  deps.forEach((d, i) => d.forEach((p) => children[p].push(i)));
  const ready = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  const free = Array.from({ length: concurrency }, (_, s) => concurrency - 1 - s);
  let head = 0;
  let finished = 0;
  return new Promise((resolve, reject) => {
    if (n === 0) return resolve();
    const pump = () => {
      while (head < ready.length && free.length > 0) {
        const i = ready[head++];
        const slot = free.pop();
        run(i, slot).then(() => {
          free.push(slot);
          finished++;
          for (const c of children[i]) if (--waiting[c] === 0) ready.push(c);
          if (finished === n) resolve();
          else pump();
        }, reject);
      }
    };
    pump();
  });
}

async function pgCall(client, call) {
  switch (call.kind) {
    case 'query':
      await client.query(call.params === undefined ? { text: call.sql, rowMode: 'array' } : { text: call.sql, values: [...call.params], rowMode: 'array' });
      return;
    case 'batch':
      await client.query(call.sql);
      return;
    case 'cleanup':
      await client.query(call.sql).catch(() => {});
  }
}

/**
 * The times of one replay: `wallMs` from connecting to the last answer;
 * `executeMs` and `executeCpuMs` (this process, every thread) from the first
 * statement of the first node to the last answer — the span our run's
 * execution phase is compared with.
 */
function phase(t0) {
  const cpu0 = process.cpuUsage();
  const t1 = performance.now();
  return () => {
    const cpu = process.cpuUsage(cpu0);
    const end = performance.now();
    return { wallMs: end - t0, executeMs: end - t1, executeCpuMs: (cpu.user + cpu.system) / 1000 };
  };
}

/** Replays on PostgreSQL with `threads` clients; resolves to its times (see `phase`). */
export async function replayPostgres(rec, threads) {
  const { default: pg } = await import('pg');
  const t0 = performance.now();
  const clients = await Promise.all(
    Array.from({ length: threads }, async () => {
      const c = new pg.Client(rec.clientConfig);
      c.on('error', () => {});
      await c.connect();
      return c;
    }),
  );
  try {
    for (const call of rec.setup) await pgCall(clients[0], call);
    const done = phase(t0);
    await scheduleDag(
      rec.nodes.map((n) => n.deps),
      threads,
      async (i, slot) => {
        for (const call of rec.nodes[i].calls) await pgCall(clients[slot], call);
      },
    );
    return done();
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
}

async function duckCall(conn, call) {
  switch (call.kind) {
    case 'query':
      (await conn.runAndReadAll(call.sql, call.params === undefined ? undefined : [...call.params])).getRowsJS();
      return;
    case 'batch':
      for (const sql of call.statements) (await conn.runAndReadAll(sql)).getRowsJS();
      return;
    case 'cleanup':
      await conn.run(call.sql).catch(() => {});
  }
}

/** Replays on a fresh DuckDB file with one connection (single writer, as our run); its times (see `phase`), opening included in `wallMs`. */
export async function replayDuckdb(rec, file) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const t0 = performance.now();
  const instance = await DuckDBInstance.create(file);
  const conn = await instance.connect();
  try {
    for (const call of rec.setup) await duckCall(conn, call);
    const done = phase(t0);
    await scheduleDag(
      rec.nodes.map((n) => n.deps),
      1,
      async (i) => {
        for (const call of rec.nodes[i].calls) await duckCall(conn, call);
      },
    );
    return done();
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, threads, duckFile] = process.argv.slice(2);
  const rec = JSON.parse(readFileSync(file, 'utf8'));
  const times = duckFile === undefined ? await replayPostgres(rec, Number(threads)) : await replayDuckdb(rec, duckFile);
  process.stdout.write(JSON.stringify(times) + '\n');
}
