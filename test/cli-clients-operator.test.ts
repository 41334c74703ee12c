// The operator commands (`service project create|update|list`,
// `service token create`) through `main()` with captured output, on a fresh
// temp data dir and its SQLite state store.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { main } from '../cli/main.js';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { sha256hex } from '../engine/state/ids.js';
import { openStateStore } from '../engine/state/open-state-store.js';

let dataDir = '';

before(async () => {
  dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'service-operator-')), 'data');
});

after(async () => {
  await rm(path.dirname(dataDir), { recursive: true, force: true });
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  // The data dir goes right after the command words, so a `--` in argv still ends the options.
  const code = await main([...argv.slice(0, 2), '--data-dir', dataDir, ...argv.slice(2)], { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

async function created(name: string, ...flags: string[]): Promise<string> {
  const r = await run('project', 'create', name, ...flags);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  assert.match(r.out, /^proj_[a-z0-9]{16}\n$/);
  return r.out.trim();
}

/** `project list` as rows of cells keyed by the header (columns are separated by two or more spaces). */
async function list(): Promise<Record<string, string>[]> {
  const r = await run('project', 'list');
  assert.equal(r.code, 0, r.err);
  const [head, ...rows] = r.out.trimEnd().split('\n');
  const starts = [...head!.matchAll(/\S+( \S+)*/g)].map((m) => m.index);
  const cols = [...head!.matchAll(/\S+( \S+)*/g)].map((m) => m[0]);
  assert.deepEqual(cols, ['ID', 'NAME', 'GIT URL', 'BRANCH', 'ENABLED', 'FILES', 'JOBS']);
  return rows.map((line) => Object.fromEntries(cols.map((c, i) => [c, line.slice(starts[i], starts[i + 1] ?? line.length).trim()])));
}
const row = async (name: string) => (await list()).find((r) => r.NAME === name);
/** The usage hint names the command's own help. */
const hint = (command: string) => `\nRun 'service ${command} --help' for usage.\n`;

test('project create: prints the id, makes the project root and an empty project env file', async () => {
  const id = await created('acme');
  const paths = projectPaths(dataDir, id);
  assert.ok(existsSync(paths.files));
  assert.match(readFileSync(paths.envFile, 'utf8'), /^connections: \{\}$/m);
  assert.deepEqual(await row('acme'), { ID: id, NAME: 'acme', 'GIT URL': '', BRANCH: '', ENABLED: '', FILES: '0', JOBS: '0' });
  await writeFile(path.join(paths.files, 'README.md'), '# acme\n');
  assert.equal((await row('acme'))!.FILES, '1');
});

test('project create: a taken or invalid name → exit 1', async () => {
  const taken = await run('project', 'create', 'acme');
  assert.deepEqual(taken, { code: 1, out: '', err: 'fatal: project name "acme" is already taken\n' });
  for (const bad of ['Acme', '-acme', '_acme', 'a b', 'a.b', 'a/b', 'x'.repeat(65), '']) {
    for (const sub of ['create', 'update']) {
      const r = await run('project', sub, '--', bad); // `--`: a name like -acme is not read as a flag
      assert.equal(r.code, 1, `${sub} ${JSON.stringify(bad)}: ${r.err}`);
      assert.equal(r.out, '');
      assert.equal(r.err, `fatal: invalid project name "${bad}": expected ^[a-z0-9][a-z0-9_-]{0,63}$\n`);
    }
  }
  assert.equal((await run('project', 'create', 'x'.repeat(64))).code, 0);
  assert.equal((await run('project', 'create', '0a_b-c')).code, 0);
  assert.deepEqual(await run('project', 'create'), { code: 2, out: '', err: `error: service project create needs NAME${hint('project create')}` });
});

test('project create with git flags; project list redacts the git url', async () => {
  await created('gitty', '--git-url', 'https://deploy:s3cret-token@git.example.com/acme.git', '--git-branch', 'dev', '--git-poll', '0', '--git-enabled=false');
  const r = (await row('gitty'))!;
  assert.deepEqual([r['GIT URL'], r.BRANCH, r.ENABLED], ['https://deploy:***@git.example.com/acme.git', 'dev', 'false']);
  const all = await run('project', 'list');
  assert.doesNotMatch(all.out, /s3cret-token/);
  await created('plain-git', '--git-url', 'file:///srv/git/beta.git');
  const p = (await row('plain-git'))!;
  assert.deepEqual([p['GIT URL'], p.BRANCH, p.ENABLED], ['file:///srv/git/beta.git', 'main', 'true']);
  assert.deepEqual(await run('project', 'create', 'nourl', '--git-branch', 'dev'), { code: 2, out: '', err: `error: --git-branch, --git-poll and --git-enabled need --git-url${hint('project create')}` });
  assert.equal((await run('project', 'create', 'badpoll', '--git-url', 'file:///x', '--git-poll', '-1')).code, 2);
  assert.equal((await run('project', 'create', 'badflag', '--git-url', 'file:///x', '--git-enabled=maybe')).code, 2);
  assert.equal(await row('nourl'), undefined);
});

test('project update: changes only the given git settings; --git-url "" removes git', async () => {
  const store = async () => {
    const s = await openStateStore(path.join(dataDir, 'state.db'));
    try {
      return (await s.getProjectByName('gitty'))!.git;
    } finally {
      await s.close();
    }
  };
  const before = (await store())!;
  const r = await run('project', 'update', 'gitty', '--git-branch', 'release');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(await store(), { ...before, branch: 'release' });
  assert.equal((await run('project', 'update', 'gitty', '--git-enabled=true', '--git-poll', '30')).code, 0);
  assert.deepEqual(await store(), { ...before, branch: 'release', enabled: true, poll_interval: 30 });
  assert.equal((await run('project', 'update', 'gitty', '--git-url', 'https://git.example.com/other.git')).code, 0);
  assert.deepEqual(await store(), { ...before, url: 'https://git.example.com/other.git', branch: 'release', enabled: true, poll_interval: 30 });
  const removed = await run('project', 'update', 'gitty', '--git-url', '');
  assert.equal(removed.code, 0, removed.err);
  assert.equal(await store(), null);
  const listed = (await row('gitty'))!;
  assert.deepEqual([listed['GIT URL'], listed.BRANCH, listed.ENABLED], ['', '', '']);
  // Git settings on a project without git need a url.
  const noUrl = await run('project', 'update', 'acme', '--git-branch', 'dev');
  assert.equal(noUrl.code, 1);
  assert.match(noUrl.err, /^fatal: .*git url is required/);
  assert.equal((await row('acme'))!.BRANCH, '');
  // Adding git to a project without it.
  assert.equal((await run('project', 'update', 'acme', '--git-url', 'file:///srv/git/acme.git', '--git-enabled=false')).code, 0);
  const acme = (await row('acme'))!;
  assert.deepEqual([acme['GIT URL'], acme.BRANCH, acme.ENABLED], ['file:///srv/git/acme.git', 'main', 'false']);
  const unknown = await run('project', 'update', 'nope', '--git-branch', 'x');
  assert.deepEqual(unknown, { code: 1, out: '', err: 'fatal: project "nope" not found\n' });
});

test('token create: prints a new token once and stores its digest for the project', async () => {
  const r = await run('token', 'create', '--project', 'acme', '--label', 'ci');
  assert.equal(r.code, 0, r.err);
  const token = r.out.trim();
  assert.match(r.out, /^\S{32,}\n$/);
  const again = (await run('token', 'create', '--project', 'acme')).out.trim();
  assert.notEqual(again, token);
  const s = await openStateStore(path.join(dataDir, 'state.db'));
  try {
    const acme = (await s.getProjectByName('acme'))!;
    assert.equal(await s.projectIdForToken(sha256hex(token)), acme.id);
    assert.equal(await s.projectIdForToken(sha256hex(again)), acme.id);
  } finally {
    await s.close();
  }
  assert.deepEqual(await run('token', 'create', '--project', 'nope'), { code: 1, out: '', err: 'fatal: project "nope" not found\n' });
  assert.deepEqual(await run('token', 'create'), { code: 2, out: '', err: `error: service token create needs --project NAME${hint('token create')}` });
});

test('unknown operator subcommands and flags are usage errors (exit 2)', async () => {
  assert.equal((await run('project', 'destroy', 'acme')).code, 2);
  assert.equal((await run('project', 'delete')).code, 2); // needs NAME
  assert.equal((await run('project', 'list', '--git-url', 'x')).code, 2);
  assert.equal((await run('token', 'revoke')).code, 2);
  assert.deepEqual(await run('project', 'create', 'one', 'two'), { code: 2, out: '', err: `error: unexpected argument: two${hint('project create')}` });
  assert.deepEqual(await run('project', 'update', 'acme', 'false'), { code: 2, out: '', err: `error: unexpected argument: false${hint('project update')}` });
  assert.equal((await run('token', 'create', '--project', 'acme', 'extra')).code, 2);
  assert.equal(await row('one'), undefined);
});
