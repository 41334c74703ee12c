/**
 * The cluster's coordination primitives on a real PostgreSQL:
 * one claim per job and due time whoever asks, and one git poller at a time,
 * handed on when its holder's session ends.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClusterDb } from '../engine/cluster/cluster-db.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import { createTempDatabase, requirePg } from './helpers/pg.js';

const info = (id: string) => ({ id, node: `node-${id}`, host: 'h', pid: 1, version: 'test', url: null, maxRunning: 1, leaseMs: 60_000 });

test('a due time is claimed once across daemons asking at the same moment; the git poller lock has one holder and moves on when it goes', async (t) => {
  if (!(await requirePg(t))) return;
  const db = await createTempDatabase('svc_cluster_db');
  await (await openStateStore(db.url)).close();
  const daemons = ['d1', 'd2', 'd3'].map((id) => ClusterDb.open(db.url, id));
  try {
    for (const [i, d] of daemons.entries()) await d.register(info(`d${i + 1}`));
    for (let k = 0; k < 20; k++) {
      const due = new Date(Date.UTC(2030, 0, 1, 0, k)).toISOString();
      const won = await Promise.all(daemons.map((d) => d.claimSchedule('job_1', due)));
      assert.equal(won.filter(Boolean).length, 1, `due ${due}: ${JSON.stringify(won)}`);
    }
    for (const d of daemons) await d.listen(() => {}, () => {});
    const leaders = await Promise.all(daemons.map((d) => d.gitLeader()));
    assert.equal(leaders.filter(Boolean).length, 1);
    const holder = leaders.indexOf(true);
    assert.equal(await daemons[holder]!.gitLeader(), true, 'the holder keeps it');
    await daemons[holder]!.close();
    const rest = daemons.filter((_, i) => i !== holder);
    const next = [];
    for (const d of rest) next.push(await d.gitLeader());
    assert.equal(next.filter(Boolean).length, 1, 'another daemon takes the poller over once the holder is gone');
  } finally {
    for (const d of daemons) await d.close();
    await db.drop();
  }
});

test('two daemons seeding a project at once: the first copy wins and the other follows it, never deleting it', async (t) => {
  if (!(await requirePg(t))) return;
  const { FileSync } = await import('../engine/cluster/file-sync.js');
  const { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const db = await createTempDatabase('svc_cluster_seed');
  const store = await openStateStore(db.url);
  const a = ClusterDb.open(db.url, 'a');
  const b = ClusterDb.open(db.url, 'b');
  try {
    const p = await store.createProject({ name: 'acme' });
    const [dirA, dirB] = [mkdtempSync(join(tmpdir(), 'svc-seed-a-')), mkdtempSync(join(tmpdir(), 'svc-seed-b-'))];
    mkdirSync(join(dirA, 'projects', p.id, 'files', 'models'), { recursive: true });
    writeFileSync(join(dirA, 'projects', p.id, 'files', 'models', 'a.sql'), 'select 1\n');
    mkdirSync(join(dirB, 'projects', p.id, 'files'), { recursive: true });
    writeFileSync(join(dirB, 'projects', p.id, 'files', 'stray.txt'), 'only on b\n');
    const logger = { log: () => {} } as never;
    const [fa, fb] = [new FileSync(a.pool, dirA, 'a', logger), new FileSync(b.pool, dirB, 'b', logger)];
    const [va, vb] = await Promise.all([fa.sync(p.id), fb.sync(p.id)]);
    assert.equal(va, vb, 'both copies reach the same version');
    const rows = (await a.pool.query("SELECT path FROM project_files WHERE kind <> 'deleted' ORDER BY path")).rows.map((r) => r.path);
    // Whichever seeded first, the other copy now equals it.
    const files = (dir: string) => ['models/a.sql', 'stray.txt'].filter((f) => existsSync(join(dir, 'projects', p.id, 'files', f)));
    assert.deepEqual(files(dirA), files(dirB));
    assert.deepEqual(files(dirA), rows.filter((r: string) => r !== 'models'));
    if (rows.includes('models/a.sql')) assert.equal(readFileSync(join(dirB, 'projects', p.id, 'files', 'models', 'a.sql'), 'utf8'), 'select 1\n');
    assert.equal(rows.length > 0, true, 'a seed never publishes an empty tree over a non-empty one');
  } finally {
    await a.close();
    await b.close();
    await store.close();
    await db.drop();
  }
});

test('a directory deleted through one daemon keeps a file another daemon saved there meanwhile (a change not yet seen is never deleted as a side effect)', async (t) => {
  if (!(await requirePg(t))) return;
  const { FileSync } = await import('../engine/cluster/file-sync.js');
  const { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const db = await createTempDatabase('svc_cluster_unseen');
  const store = await openStateStore(db.url);
  const a = ClusterDb.open(db.url, 'a');
  const b = ClusterDb.open(db.url, 'b');
  try {
    const p = await store.createProject({ name: 'acme' });
    const [dirA, dirB] = [mkdtempSync(join(tmpdir(), 'svc-unseen-a-')), mkdtempSync(join(tmpdir(), 'svc-unseen-b-'))];
    const rootA = join(dirA, 'projects', p.id, 'files');
    const rootB = join(dirB, 'projects', p.id, 'files');
    mkdirSync(join(rootA, 'd'), { recursive: true });
    writeFileSync(join(rootA, 'd', 'x.txt'), 'x\n');
    const logger = { log: () => {} } as never;
    const [fa, fb] = [new FileSync(a.pool, dirA, 'a', logger), new FileSync(b.pool, dirB, 'b', logger)];
    await fa.sync(p.id);
    await fb.sync(p.id);
    assert.equal(readFileSync(join(rootB, 'd', 'x.txt'), 'utf8'), 'x\n');
    // B saves d/y.txt; A has not synced it when it deletes d.
    writeFileSync(join(rootB, 'd', 'y.txt'), 'y\n');
    await fb.publish(p.id, { action: 'save', paths: ['d/y.txt'] });
    rmSync(join(rootA, 'd'), { recursive: true });
    await fa.publish(p.id, { action: 'delete', paths: ['d'] });
    const live = (await a.pool.query("SELECT path FROM project_files WHERE kind <> 'deleted' ORDER BY path")).rows.map((r) => r.path);
    assert.deepEqual(live, ['d', 'd/y.txt'], 'x.txt (seen by A) is deleted; y.txt (unseen) stays, and so does its directory');
    await fa.sync(p.id);
    await fb.sync(p.id);
    for (const root of [rootA, rootB]) {
      assert.equal(readFileSync(join(root, 'd', 'y.txt'), 'utf8'), 'y\n');
      assert.throws(() => readFileSync(join(root, 'd', 'x.txt')));
    }
  } finally {
    await a.close();
    await b.close();
    await store.close();
    await db.drop();
  }
});
