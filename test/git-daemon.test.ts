// Git sync in the real daemon (`startDaemon`, the operator and client commands): the
// operator configures a project with `service project create|update`,
// the daemon picks the change up within 5 s and polls (first poll at once),
// and `service git pull` prints `pulled=… sha=… created=… updated=…
// deleted=…` then the file names and invalid files. The remote is a
// local bare repository (file:// URL).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseServeFlags } from '../cli/daemon-flags.js';
import { startDaemon, type RunningDaemon } from '../daemon/start-daemon.js';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { eventually } from './helpers/api-server.js';
import { runMain, withEnv, type Run } from './helpers/cli-daemon.js';
import { createGitRemote, type GitRemoteRepo } from './helpers/git-remote.js';

const ORDERS = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.orders:\n    object: main.orders\n    mode: full-refresh\n';
const BAD_YAML = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    mode: full-refresh\n   object: x\n';

let base: string;
let dataDir: string;
let remote: GitRemoteRepo;
let daemon: RunningDaemon;
let root: string;
let token: string;
let devSha: string;
let mainSha: string;
const savedHome = process.env.SERVICE_HOME_DIR;

const operator = async (...argv: string[]) => {
  const r = await runMain([...argv, '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.err);
  return r.out.trim();
};
const client = (...argv: string[]): Promise<Run> => withEnv({ SERVICE_PROJECT_TOKEN: token, SERVICE_PLATFORM_HOST: daemon.url }, () => runMain(argv));
const readme = () => readFile(path.join(root, 'README.md'), 'utf8').catch(() => null);
/** Waits until a pull stored `sha` as the last synced commit; returns how long that took. */
async function synced(sha: string): Promise<number> {
  const t0 = Date.now();
  await eventually(async () => ((await daemon.store.getProjectByName('shop'))!.git!.last_sha === sha ? true : undefined), 10_000, `a poll to sync ${sha}`);
  return Date.now() - t0;
}

before(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'service-git-daemon-'));
  process.env.SERVICE_HOME_DIR = path.join(base, 'home');
  dataDir = path.join(base, 'data');
  remote = await createGitRemote(base);
  devSha = await remote.commit({ 'README.md': 'dev\n' }, 'dev');
  mainSha = await remote.commit({ 'README.md': 'main\n', 'replications/orders.yaml': ORDERS });
  const id = await operator('project', 'create', 'shop', '--git-url', remote.url, '--git-enabled=false', '--git-poll', '60');
  root = projectPaths(dataDir, id).files;
  token = await operator('token', 'create', '--project', 'shop');
  daemon = await startDaemon(parseServeFlags(['--data-dir', dataDir, '--port', '0']), { log: () => {}, enabled: () => false });
});

after(async () => {
  await daemon?.stop(true);
  if (savedHome === undefined) delete process.env.SERVICE_HOME_DIR;
  else process.env.SERVICE_HOME_DIR = savedHome;
  await rm(base, { recursive: true, force: true });
});

test('service git pull while git is disabled: error: <error> (<code>), exit 1', async () => {
  const r = await client('git', 'pull');
  assert.deepEqual(r, { code: 1, out: '', err: 'error: git integration is disabled (conflict)\n' });
});

test('enabling git with the operator command: the daemon polls within 5 s (first poll at once)', async () => {
  await operator('project', 'update', 'shop', '--git-enabled=true');
  const took = await synced(mainSha);
  assert.ok(took < 7000, `took ${took} ms (tick 5 s + the pull)`);
  assert.equal(await readme(), 'main\n');
  const jobs = JSON.parse((await client('jobs', 'list', '-o', 'json')).out).jobs;
  assert.deepEqual(jobs.map((j: any) => [j.name, j.default]), [['orders', true]]);
});

test('service git pull: the summary line, then created, updated, deleted and invalid files; a second pull is the no-op line', async () => {
  const sha = await remote.commit({ 'x.txt': 'x\n', 'README.md': 'main v2\n', 'replications/bad.yaml': BAD_YAML, 'replications/orders.yaml': null });
  const r = await client('git', 'pull');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const lines = r.out.trimEnd().split('\n');
  assert.deepEqual(lines.slice(0, 5), [
    `pulled=true sha=${sha} created=2 updated=1 deleted=1`,
    'created replications/bad.yaml',
    'created x.txt',
    'updated README.md',
    'deleted replications/orders.yaml',
  ]);
  assert.equal(lines.length, 6);
  assert.match(lines[5]!, /^invalid replications\/bad\.yaml:6:1: : \S/);

  const again = await client('git', 'pull');
  assert.deepEqual(again, { code: 0, out: `pulled=false sha=${sha} created=0 updated=0 deleted=0\n`, err: '' });
  const json = await client('git', 'pull', '-o', 'json');
  assert.deepEqual(JSON.parse(json.out), { pulled: false, created: 0, updated: 0, deleted: 0, sha, created_files: [], updated_files: [], deleted_file_names: [], invalid_files: [] });
});

test('a branch change with the operator command is polled within 5 s although the interval is 60 s', async () => {
  await operator('project', 'update', 'shop', '--git-branch', 'dev');
  const took = await synced(devSha);
  assert.ok(took < 7000, `took ${took} ms (tick 5 s + the pull)`);
  assert.equal(await readme(), 'dev\n');
  const project = (await daemon.store.getProjectByName('shop'))!;
  assert.equal(project.git!.branch, 'dev');
  assert.equal(project.git!.last_error, null);
});

test('a missing branch through the CLI: the 422 as error: … (conflict), exit 1', async () => {
  await operator('project', 'update', 'shop', '--git-branch', 'nope', '--git-poll', '0');
  const r = await client('git', 'pull');
  assert.deepEqual(r, { code: 1, out: '', err: 'error: branch "nope" does not exist on remote (conflict)\n' });
});
