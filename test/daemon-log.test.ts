/**
 * The daemon's request log: one line per request on
 * stderr carrying the response's X-Request-Id. Lines are batched into one
 * write per event-loop turn (engine/log.ts batchedWriter); none may be lost
 * or reordered, under a burst of concurrent requests and across a SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../cli/main.js';
import { batchedWriter } from '../engine/log.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'service.js');
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('batchedWriter: the texts of one turn become one write, in order; later turns write again; flush writes now', async () => {
  const writes: string[] = [];
  const w = batchedWriter((t) => writes.push(t));
  w.write('a\n');
  w.write('b\n');
  w.write('c\n');
  assert.deepEqual(writes, [], 'nothing written before the turn ends');
  await turn();
  assert.deepEqual(writes, ['a\nb\nc\n']);
  w.write('d\n');
  await turn();
  assert.deepEqual(writes, ['a\nb\nc\n', 'd\n']);
  w.write('e\n');
  w.flush();
  assert.deepEqual(writes, ['a\nb\nc\n', 'd\n', 'e\n']);
  await turn();
  assert.equal(writes.length, 3, 'a flush leaves nothing for the scheduled one');
});

async function cli(...argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { out: (t) => (out += t), err: () => {} });
  assert.equal(code, 0, argv.join(' '));
  return out.trim();
}

test('the real daemon logs one line per request with its X-Request-Id, none lost, through SIGTERM', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-daemon-log-'));
  await cli('project', 'create', 'acme', '--data-dir', dataDir);
  const token = await cli('token', 'create', '--project', 'acme', '--data-dir', dataDir);
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SERVICE_LOGGING: 'JSON' } });
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(log);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 10);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`daemon exited before listening:\n${log}`));
    });
  });
  const auth = { Authorization: `Service-Project-Token ${token}` };
  const requests = Array.from({ length: 300 }, (_, i) =>
    i % 3 === 0
      ? fetch(`${url}/health`)
      : i % 3 === 1
        ? fetch(`${url}/execution/list?limit=5`, { headers: auth })
        : fetch(`${url}/project/file/save`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ file: { name: `logs/f${i}.txt`, body: 'x' } }) }),
  );
  const responses = await Promise.all(requests);
  const ids = responses.map((r) => {
    assert.equal(r.status, 200);
    return r.headers.get('x-request-id')!;
  });
  await Promise.all(responses.map((r) => r.arrayBuffer()));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  const lines = log.trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
  const requestLines = lines.filter((l) => /^(GET|POST) \//.test(l.msg));
  assert.equal(requestLines.length, 300);
  const logged = requestLines.map((l) => l.msg.split(' ')[4]);
  assert.deepEqual([...logged].sort(), [...ids].sort(), 'one line per request, with its X-Request-Id');
  assert.match(lines[lines.length - 1]!.msg, /SIGTERM|shut|stopp/i, `the shutdown line comes last:\n${lines.slice(-3).map((l) => l.msg).join('\n')}`);
});

test('the daemon writes full ISO-8601 times; the CLI keeps its short clock', async () => {
  const { streamLogger } = await import('../engine/log.js');
  const lines: string[] = [];
  const at = new Date('2026-11-24T20:19:04.123Z');
  streamLogger({ level: 'info', isoTime: true, now: () => at, write: (l) => lines.push(l) }).log('info', 'execution X running');
  assert.deepEqual(lines, ['2026-11-24T20:19:04.123Z INF execution X running\n']);
  streamLogger({ level: 'info', now: () => at, write: (l) => lines.push(l) }).log('warn', 'w');
  assert.match(lines[1]!, /^\d{1,2}:\d{2}(AM|PM) WRN w\n$/);
});

test('colours: only on a terminal, only on the process stderr, never with NO_COLOR', async () => {
  const { streamLogger } = await import('../engine/log.js');
  const { wantsColor } = await import('../cli/cli-logger.js');
  const { processIo } = await import('../cli/io.js');
  assert.equal(wantsColor(processIo.err, true, {}), true);
  assert.equal(wantsColor(processIo.err, true, { NO_COLOR: '1' }), false);
  assert.equal(wantsColor(processIo.err, true, { NO_COLOR: '' }), true, 'an empty NO_COLOR does not count');
  assert.equal(wantsColor(processIo.err, false, {}), false, 'a pipe or a file gets plain text');
  assert.equal(wantsColor(() => {}, true, {}), false, 'captured output gets plain text');
  const lines: string[] = [];
  streamLogger({ level: 'info', color: true, isoTime: true, now: () => new Date(0), write: (l) => lines.push(l) }).log('error', 'boom');
  assert.deepEqual(lines, ['1970-01-01T00:00:00.000Z \x1b[31mERR\x1b[0m boom\n']);
});
