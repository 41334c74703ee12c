/**
 * Operator commands: act on the state store and data dir
 * directly, may run while the daemon runs, and are not reachable over HTTP.
 *   service project create NAME [--git-url URL] [--git-branch B] [--git-poll S] [--git-enabled=true|false]
 *   service project update NAME [same git flags]
 *   service project list
 *   service project delete NAME
 *   service token create --project NAME [--label L]
 *   service token list [--project NAME] [-o table|json]
 *   service token revoke ID
 */
import { mkdirSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { redact } from '../engine/connections/index.js';
import { EngineError, errorChain } from '../engine/errors.js';
import { ProjectTree } from '../engine/files/project-tree.js';
import { projectPaths } from '../engine/daemon-projects/project-paths.js';
import { newToken, sha256hex } from '../engine/state/ids.js';
import { openStateStore } from '../engine/state/open-state-store.js';
import type { GitRecord, StateStore } from '../engine/state/store.js';
import { storeLocation } from './daemon-flags.js';
import { printUsageError, type Io } from './io.js';
import { flagValue, type ParsedArgs } from './parse-command-line.js';

const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `projects/<id>/files/` and an empty `projects/<id>/env.yaml` (the data directory's layout). */
export function ensureProjectDirs(dataDir: string, projectId: string): void {
  const paths = projectPaths(dataDir, projectId);
  mkdirSync(paths.files, { recursive: true });
  if (!existsSync(paths.envFile)) writeFileSync(paths.envFile, '# connections of this project\nconnections: {}\n');
}

function gitPatch(flags: Map<string, string>): Partial<GitRecord> | null | undefined {
  if (flags.get('git-url') === '') return null; // `--git-url ""` removes git
  const patch: { -readonly [K in keyof GitRecord]?: GitRecord[K] } = {};
  if (flags.has('git-url')) {
    patch.url = flags.get('git-url')!;
    if (!flags.has('git-enabled')) patch.enabled = true;
  }
  if (flags.has('git-branch')) patch.branch = flags.get('git-branch')!;
  if (flags.has('git-poll')) {
    const n = Number(flags.get('git-poll'));
    if (!Number.isInteger(n) || n < 0) throw new EngineError('usage', `invalid argument "${flags.get('git-poll')}" for "--git-poll": expected seconds (0 = no polling)`);
    patch.poll_interval = n;
  }
  if (flags.has('git-enabled')) {
    const v = flags.get('git-enabled')!;
    if (v !== 'true' && v !== 'false') throw new EngineError('usage', `invalid argument "${v}" for "--git-enabled": expected true or false`);
    patch.enabled = v === 'true';
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

async function withStore<T>(flags: ParsedArgs, fn: (store: StateStore, dataDir: string) => Promise<T>): Promise<T> {
  const { dataDir, state } = storeLocation(flags);
  mkdirSync(dataDir, { recursive: true });
  const store = await openStateStore(state);
  try {
    return await fn(store, dataDir);
  } finally {
    await store.close();
  }
}

/** `service project create|update|list`. */
export async function projectCommand(sub: 'create' | 'update' | 'list', a: ParsedArgs, io: Io): Promise<number> {
  const flags = new Map([...a.values].map(([k, v]) => [k, v.at(-1)!]));
  try {
    if (sub === 'create' || sub === 'update') {
      const name = a.positionals[0]!;
      if (!PROJECT_NAME.test(name)) throw new EngineError('bad_request', `invalid project name "${name}": expected ^[a-z0-9][a-z0-9_-]{0,63}$`);
      const patch = gitPatch(flags);
      return await withStore(a, async (store, dataDir) => {
        if (sub === 'create') {
          const git = patch ? { url: '', branch: 'main', enabled: true, poll_interval: 60, last_sha: null, last_pull: null, last_error: null, ...patch } : null;
          if (git && git.url === '') throw new EngineError('usage', '--git-branch, --git-poll and --git-enabled need --git-url');
          const p = await store.createProject({ name, git });
          ensureProjectDirs(dataDir, p.id);
          io.out(`${p.id}\n`);
          return 0;
        }
        const p = await store.getProjectByName(name);
        if (!p) throw new EngineError('not_found', `project "${name}" not found`);
        if (patch !== undefined) await store.updateProjectGit(p.id, patch);
        io.out(`updated ${p.id}\n`);
        return 0;
      });
    }
    return await withStore(a, async (store, dataDir) => {
      const rows = [['ID', 'NAME', 'GIT URL', 'BRANCH', 'ENABLED', 'FILES', 'JOBS']];
      for (const p of await store.listProjects()) {
        const counts = await store.projectCounts(p.id);
        const files = await new ProjectTree(projectPaths(dataDir, p.id).files).countFiles().catch(() => 0);
        rows.push([p.id, p.name, p.git ? redact(p.git.url) : '', p.git?.branch ?? '', p.git ? String(p.git.enabled) : '', String(files), String(counts.jobs)]);
      }
      printTable(rows, io);
      return 0;
    });
  } catch (err) {
    return report(err, io, `project ${sub}`);
  }
}

/** `service token create --project NAME [--label L]`. */
export async function tokenCommand(a: ParsedArgs, io: Io): Promise<number> {
  try {
    const name = flagValue(a, 'project');
    if (!name) throw new EngineError('usage', 'service token create needs --project NAME');
    return await withStore(a, async (store) => {
      const p = await store.getProjectByName(name);
      if (!p) throw new EngineError('not_found', `project "${name}" not found`);
      const token = newToken();
      await store.addToken(p.id, sha256hex(token), flagValue(a, 'label') ?? '');
      io.out(`${token}\n`);
      return 0;
    });
  } catch (err) {
    return report(err, io, 'token create');
  }
}

function printTable(rows: string[][], io: Io): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  io.out(rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n');
}

/**
 * `service project delete NAME`: the store's records first (refused while an
 * execution of the project is queued or running, so nothing is half-deleted),
 * then `projects/<id>/` — its files, env file and git metadata.
 */
export async function projectDelete(a: ParsedArgs, io: Io): Promise<number> {
  try {
    const name = a.positionals[0]!;
    return await withStore(a, async (store, dataDir) => {
      const p = await store.getProjectByName(name);
      if (!p) throw new EngineError('not_found', `project "${name}" not found`);
      if (!(await store.deleteProject(p.id))) throw new EngineError('not_found', `project "${name}" not found`);
      rmSync(projectPaths(dataDir, p.id).dir, { recursive: true, force: true });
      io.out(`deleted ${p.id}\n`);
      return 0;
    });
  } catch (err) {
    return report(err, io, 'project delete');
  }
}

/** `service token list [--project NAME] [-o table|json]`: ids, never the tokens (only digests are stored). */
export async function tokenList(a: ParsedArgs, io: Io): Promise<number> {
  try {
    const output = flagValue(a, 'output') ?? 'table';
    if (output !== 'table' && output !== 'json') throw new EngineError('usage', `invalid argument "${output}" for "-o, --output": expected table or json`);
    const only = flagValue(a, 'project');
    return await withStore(a, async (store) => {
      const names = new Map((await store.listProjects()).map((p) => [p.id, p.name]));
      const projectId = only === undefined ? undefined : [...names].find(([, n]) => n === only)?.[0];
      if (only !== undefined && !projectId) throw new EngineError('not_found', `project "${only}" not found`);
      const tokens = (await store.listTokens()).filter((t) => projectId === undefined || t.project_id === projectId)
        .map((t) => ({ id: t.id, project: names.get(t.project_id) ?? t.project_id, project_id: t.project_id, label: t.label, created: t.created }));
      if (output === 'json') io.out(JSON.stringify({ tokens }) + '\n');
      else printTable([['ID', 'PROJECT', 'LABEL', 'CREATED'], ...tokens.map((t) => [t.id, t.project, t.label, t.created])], io);
      return 0;
    });
  } catch (err) {
    return report(err, io, 'token list');
  }
}

/** `service token revoke ID`: ID is what `token list` shows (a longer prefix of the digest also works). */
export async function tokenRevoke(a: ParsedArgs, io: Io): Promise<number> {
  try {
    const id = a.positionals[0]!.toLowerCase();
    if (!/^[0-9a-f]{12,64}$/.test(id)) throw new EngineError('usage', `invalid token id "${a.positionals[0]}": expected the 12 hex digits service token list shows`);
    return await withStore(a, async (store) => {
      const matches = (await store.listTokens()).filter((t) => t.digest.startsWith(id));
      if (matches.length === 0) throw new EngineError('not_found', `token ${id} not found`);
      if (matches.length > 1) throw new EngineError('conflict', `token id ${id} matches ${matches.length} tokens: give more hex digits of the digest`);
      await store.revokeToken(matches[0]!.digest);
      io.out(`revoked ${id}\n`);
      return 0;
    });
  } catch (err) {
    return report(err, io, 'token revoke');
  }
}

function report(err: unknown, io: Io, topic: string): number {
  if (err instanceof EngineError && err.code === 'usage') return printUsageError(err.message, topic, io);
  io.err(`fatal: ${errorChain(err)}\n`);
  return 1;
}
