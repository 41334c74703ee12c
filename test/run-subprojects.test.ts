/**
 * Independent sub-projects on PostgreSQL run concurrently up to
 * --threads: both children's slow models start before either finishes.
 * Proved by the order of progress lines, never by durations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, logLines, project } from './helpers/build-cli.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

test('independent PostgreSQL sub-projects overlap with --threads 2', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_subs');
  const saved = process.env.PG;
  process.env.PG = db.url;
  try {
    const slow = (name: string) => `select 1 as id from (select pg_sleep(1)) ${name}`;
    const dir = project({
      'alpha/service_build.yml': 'target: PG\n',
      'alpha/a_slow.sql': slow('a'),
      'beta/service_build.yml': 'target: PG\n',
      'beta/b_slow.sql': slow('b'),
    });
    const r = await build('run', dir, '-R', '--threads', '2');
    assert.equal(r.code, 0, r.err);
    const lines = logLines(r.err).filter((l) => /_slow \(full-refresh\)/.test(l));
    const firstFinish = lines.findIndex((l) => / OK \(/.test(l));
    const starts = lines.map((l, i) => (/ START$/.test(l) ? i : -1)).filter((i) => i >= 0);
    assert.equal(starts.length, 2, lines.join('\n'));
    assert.ok(starts.every((i) => i < firstFinish), `both START before the first OK:\n${lines.join('\n')}`);
    assert.match(r.out, /=== Sub-project: alpha \(target: PG\) ===/);
    assert.match(r.out, /=== Sub-project: beta \(target: PG\) ===/);
  } finally {
    if (saved === undefined) delete process.env.PG;
    else process.env.PG = saved;
    await db.drop();
  }
});
