// The model files of a compile from a large cache file are stat'ed ahead on a
// helper thread (engine/compile/stat-ahead.ts): its values are statSync's, a
// missing file is null, and an edited model file is still found (its stamp
// differs) and rendered again, and only it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { clearCompileCacheMemory } from '../engine/compile/compile-cache.js';
import { STAT_AHEAD_MIN_BYTES, StatAhead } from '../engine/compile/stat-ahead.js';
import { build, duckProject, logLines, tempDir } from './helpers/build-cli.js';

test("the helper's values are statSync's; a missing file is null, a file it was not given undefined", () => {
  const dir = tempDir();
  const files = Array.from({ length: 100 }, (_, i) => join(dir, `f${i}.sql`));
  files.forEach((f, i) => writeFileSync(f, 'x'.repeat(i)));
  // The helper's start (its module transpiled under tsx) can take seconds on a loaded machine.
  const ahead = new StatAhead(60_000);
  ahead.stat([...files, join(dir, 'missing.sql')]);
  try {
    for (const f of files) {
      const st = statSync(f);
      assert.deepEqual(ahead.values(f), [st.mtimeMs, st.ctimeMs, st.size, st.ino]);
    }
    assert.equal(ahead.values(join(dir, 'missing.sql')), null);
    assert.equal(ahead.values(join(dir, 'other.sql')), undefined);
  } finally {
    ahead.stop();
  }
});

/** How many models came from the cache, and the rendered ones' names (the first 50), from the `--debug` compile cache line. */
async function renderedBy(dir: string): Promise<{ cached: number; rendered: string[]; out: string }> {
  clearCompileCacheMemory(); // as a new process: the cache file is read
  const r = await build('compile', dir, '--debug');
  assert.equal(r.code, 0, r.err);
  const line = logLines(r.err).find((l) => l.includes('compile cache: '))!;
  const m = /compile cache: (\d+) of \d+ models from cache(?:; rendered: (.*))?$/.exec(line)!;
  return { cached: Number(m[1]), rendered: m[2] === undefined ? [] : m[2].split(', '), out: r.out };
}

test('with a cache file large enough for the helper, an edited model file is rendered again, and only it', async () => {
  // 300 models of ≈4 KB: the cache file (which keeps each file's text) passes the helper's threshold.
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`m/m${i}.sql`] = `-- ${'padding '.repeat(500)}\nselect ${i} as id\n`;
  const dir = duckProject(files);
  // Files younger than 2 s are never trusted by their stamps (they are read): let them age first.
  await sleep(2100);
  assert.equal((await renderedBy(dir)).cached, 0);
  assert.ok(statSync(join(dir, '.service', 'compile-cache')).size >= STAT_AHEAD_MIN_BYTES);
  assert.equal((await renderedBy(dir)).cached, 300);
  writeFileSync(join(dir, 'm', 'm150.sql'), `-- ${'padding '.repeat(500)}\nselect 999 as id\n`);
  await sleep(2100);
  const r = await renderedBy(dir);
  assert.deepEqual([r.cached, r.rendered], [299, ['m150']]);
  assert.match(r.out, /m150:[\s\S]*?select 999 as id/);
});
