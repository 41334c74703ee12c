// Cancelling a replication stream on a DuckDB file's thread stops DuckDB's
// statement in flight: the `replication.stream` handler, as the file's actor
// runs it (`duckdbFile` set), on a DuckDB → DuckDB stream whose
// `INSERT … SELECT` would run for hours. A scalar function registered on the
// file's instance reports the statement's first chunk, so the cancel lands
// inside the statement and nowhere else; without the interrupt the handler
// would only settle when the statement ended. The previous full-refresh
// table stays as it was.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BOOLEAN, BIGINT, DuckDBScalarFunction } from '@duckdb/node-api';
import { replicationStream } from '../actors/pool-tasks/replication-stream.js';
import type { Connection } from '../engine/connections/index.js';
import { EngineError } from '../engine/errors.js';
import { expandStreams, planReplication, type StreamPlan } from '../engine/replication/index.js';
import { closeAllDuckdbInstances, duckdbInstance } from '../engine/targets/index.js';
import { replicationFile } from './helpers/replication-fixtures.js';

const dirs: string[] = [];
after(async () => {
  await closeAllDuckdbInstances();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function plan(lake: Connection, sql: string): Promise<StreamPlan> {
  const file = replicationFile(`source: LAKE\ntarget: LAKE\nstreams:\n  slow:\n    sql: "${sql}"\n    object: main.slow\n`);
  const streams = await expandStreams(file, 'database', 'main', { tables: async () => [], files: async () => [] });
  return planReplication({ file, source: lake, target: lake, streams, lookup: () => undefined, start: new Date(), execId: 'e', readProjectFile: () => '' })[0]!;
}

test('a cancel interrupts the DuckDB statement of a stream on the file\'s thread; the previous table is intact', { timeout: 60_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'service-repl-cancel-'));
  dirs.push(dir);
  const file = path.join(dir, 'lake.duckdb');
  const lake: Connection = { type: 'duckdb', name: 'LAKE', source: 'project', path: file, schema: 'main' };
  const run = (p: StreamPlan, signal: AbortSignal) =>
    replicationStream({ type: 'replication.stream', plan: p, log: { channel: `test-repl-cancel-${process.pid}`, key: 'k' }, duckdbFile: file }, { taskId: 1, signal });

  assert.equal((await run(await plan(lake, 'select 7::bigint as n'), new AbortController().signal)).rows, 1);

  // The probe runs on this thread (the handler's), called by DuckDB once per chunk of the statement.
  let chunks = 0;
  let firstChunk!: () => void;
  const started = new Promise<void>((resolve) => (firstChunk = resolve));
  const conn = await (await duckdbInstance(file)).connect();
  conn.registerScalarFunction(DuckDBScalarFunction.create({
    name: 'cancel_probe',
    returnType: BOOLEAN,
    parameterTypes: [BIGINT],
    volatile: true,
    mainFunction: (_info, input, output) => {
      chunks++;
      for (let r = 0; r < input.rowCount; r++) output.setItem(r, true);
      output.flush();
      firstChunk();
    },
  }));
  conn.closeSync();

  // 10^12 rows, a hop to this thread every 2,048 of them: hours, were it not interrupted.
  const ac = new AbortController();
  const slow = run(await plan(lake, 'select count(*) as n from range(1000000000000) where cancel_probe(range)'), ac.signal);
  const outcome = slow.then(() => 'finished', (err: unknown) => err);
  await Promise.race([started, outcome]);
  assert.ok(chunks > 0, `the statement was running when cancelled (it settled first: ${String(await Promise.race([outcome, 'pending']))})`);
  ac.abort();
  const err = await outcome;
  assert.ok(err instanceof EngineError, `the stream failed (got ${String(err)})`);
  assert.equal(err.code, 'cancelled');
  const after = chunks;
  const check = await (await duckdbInstance(file)).connect();
  try {
    assert.deepEqual((await check.runAndReadAll('select n from main.slow')).getRowsJS(), [[7n]]);
    assert.equal(chunks, after, 'the statement stopped: no chunk reached the probe since');
  } finally {
    check.closeSync();
  }
});
