/**
 * Shared project files in cluster mode (docs/cluster.md, "Project files"):
 * the state store holds every project's files — content, a version per
 * project, and what the last change was — and each daemon keeps a local
 * working copy under its data directory, because job runs, git and the file
 * API work on a real directory.
 *
 * - publish: after a change through this daemon (a save, delete, rename or
 *   git pull, already validated and applied to the local copy), the touched
 *   paths are compared with the store and what differs is written in one
 *   transaction that bumps the project's version and NOTIFYs the others.
 * - sync: brings the local copy up to the store's version — on NOTIFY, every
 *   heartbeat (a missed notification costs one heartbeat), and before an
 *   execution starts. Rows changed after the local version are applied; a
 *   first sync of a data directory also removes local entries the store does
 *   not have.
 * Both run under the project's lock, so a sync never interleaves with a
 * local save of the same project, and each file is replaced by a rename, so
 * readers see the old or the new content, never a mix.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { STAGING_PREFIX } from '../files/file-name.js';
import { projectLock } from '../files/project-lock.js';
import { touchTree } from '../files/tree-index.js';
import type { Logger } from '../log.js';
import { projectPaths } from '../daemon-projects/project-paths.js';
import { prefixUpperBound } from '../state/records.js';
import { FILES_CHANNEL } from './cluster-db.js';

type Row = Record<string, unknown>;

interface LocalEntry {
  readonly kind: 'file' | 'dir';
  readonly content?: Buffer;
}

const VERSION_FILE = 'tree-version';
const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Every file and directory at or under `rel` in `root` (staging files left out), by relative path. */
async function walkLocal(root: string, rel: string): Promise<Map<string, LocalEntry>> {
  const out = new Map<string, LocalEntry>();
  const visit = async (r: string): Promise<void> => {
    const abs = r === '' ? root : path.join(root, r);
    const st = await lstat(abs).catch(() => null);
    if (!st) return;
    if (st.isFile()) {
      out.set(r, { kind: 'file', content: await readFile(abs) });
    } else if (st.isDirectory()) {
      if (r !== '') out.set(r, { kind: 'dir' });
      for (const name of await readdir(abs)) {
        if (name.startsWith(STAGING_PREFIX)) continue;
        await visit(r === '' ? name : `${r}/${name}`);
      }
    }
  };
  await visit(rel);
  return out;
}

/** `path = p` or under `p/`; everything for the root. */
function under(rel: string, from: number): { sql: string; params: string[] } {
  if (rel === '') return { sql: 'true', params: [] };
  return { sql: `(path = $${from} OR (path >= $${from + 1} AND path < $${from + 2}))`, params: [rel, `${rel}/`, prefixUpperBound(`${rel}/`)] };
}

export interface FileChange {
  readonly action: string;
  readonly paths: readonly string[];
}

export class FileSync {
  readonly #local = new Map<string, number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly dataDir: string,
    private readonly daemonId: string,
    private readonly logger: Logger,
  ) {}

  #versionFile(projectId: string): string {
    return path.join(projectPaths(this.dataDir, projectId).dir, VERSION_FILE);
  }

  /** The version of the store this data directory's copy of the project matches (0: never synced). */
  localVersion(projectId: string): number {
    let v = this.#local.get(projectId);
    if (v === undefined) {
      const file = this.#versionFile(projectId);
      v = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || 0 : 0;
      this.#local.set(projectId, v);
    }
    return v;
  }

  #setLocal(projectId: string, v: number): void {
    this.#local.set(projectId, v);
    const file = this.#versionFile(projectId);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, `${v}\n`);
    renameSync(`${file}.tmp`, file);
  }

  /**
   * Writes what differs between the local copy under `paths` and the store
   * (a path that is gone locally is deleted in the store, with everything
   * under it) as one new version, and notifies the other daemons. A `seed`
   * (the first copy of a project) happens only while the store has none, and
   * returns -1 when another daemon's seed came first.
   */
  async publish(projectId: string, change: FileChange): Promise<number> {
    const root = projectPaths(this.dataDir, projectId).files;
    return projectLock(root).run(async () => {
      const c = await this.pool.connect();
      try {
        await c.query('BEGIN');
        const created = await c.query("INSERT INTO project_trees (project_id, version, changed_by, change) VALUES ($1, 0, $2, '{}') ON CONFLICT DO NOTHING", [projectId, this.daemonId]);
        if (change.action === 'seed' && (created.rowCount ?? 0) === 0) {
          // Another daemon seeded the project meanwhile: its copy wins, ours follows it.
          await c.query('ROLLBACK');
          return -1;
        }
        const current = Number((await c.query('SELECT version FROM project_trees WHERE project_id = $1 FOR UPDATE', [projectId])).rows[0].version);
        const version = current + 1;
        // Rows changed after this copy's version are changes made through other daemons that
        // this one has not applied yet: a change here overrides them only for the very path it
        // names (last writer wins), never as a side effect of a directory delete, rename or pull.
        const seen = this.localVersion(projectId);
        const unseen = (s: Row | undefined, p: string, rel: string): boolean => s !== undefined && Number(s.version) > seen && p !== rel;
        let changed = 0;
        for (const rel of change.paths.map((p) => p.replace(/^\/+|\/+$/g, ''))) {
          const local = await walkLocal(root, rel);
          const w = under(rel, 2);
          const stored = new Map(
            ((await c.query(`SELECT path, kind, digest, version FROM project_files WHERE project_id = $1 AND ${w.sql}`, [projectId, ...w.params])).rows as Row[]).map((r) => [String(r.path), r]),
          );
          for (const [p, e] of local) {
            const s = stored.get(p);
            const d = e.content ? digest(e.content) : null;
            if (s && s.kind === e.kind && (s.digest ?? null) === d) continue;
            if (unseen(s, p, rel)) continue;
            await c.query(
              `INSERT INTO project_files (project_id, path, kind, content, digest, version) VALUES ($1, $2, $3, $4, $5, $6)
               ON CONFLICT (project_id, path) DO UPDATE SET kind = EXCLUDED.kind, content = EXCLUDED.content, digest = EXCLUDED.digest, version = EXCLUDED.version`,
              [projectId, p, e.kind, e.content ?? null, d, version],
            );
            changed++;
          }
          const missing = [...stored.entries()].filter(([p, s]) => s.kind !== 'deleted' && !local.has(p));
          const kept = missing.filter(([p, s]) => unseen(s, p, rel)).map(([p]) => p);
          // A directory that still holds an unseen entry is not gone.
          const gone = missing.filter(([p, s]) => !unseen(s, p, rel) && !kept.some((k) => k.startsWith(`${p}/`))).map(([p]) => p);
          if (gone.length > 0) {
            await c.query("UPDATE project_files SET kind = 'deleted', content = NULL, digest = NULL, version = $3 WHERE project_id = $1 AND path = ANY($2::text[])", [projectId, gone, version]);
            changed += gone.length;
          }
        }
        if (changed === 0 && current > 0) {
          await c.query('ROLLBACK');
          return current;
        }
        await c.query('UPDATE project_trees SET version = $2, changed = clock_timestamp(), changed_by = $3, change = $4 WHERE project_id = $1', [
          projectId,
          version,
          this.daemonId,
          JSON.stringify({ action: change.action, paths: change.paths, entries: changed }),
        ]);
        await c.query('SELECT pg_notify($1, $2)', [FILES_CHANNEL, `${projectId}:${version}`]);
        await c.query('COMMIT');
        // Our own copy already holds this version's content; anything older we missed comes with the next sync.
        if (this.localVersion(projectId) === current) this.#setLocal(projectId, version);
        return version;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        c.release();
      }
    });
  }

  /** Puts `paths` of the local copy back to what the store has (after a change that could not be published). */
  async restore(projectId: string, paths: readonly string[]): Promise<void> {
    const root = projectPaths(this.dataDir, projectId).files;
    await projectLock(root).run(async () => {
      for (const rel of paths) {
        const w = under(rel, 2);
        const rows = (await this.pool.query(`SELECT path, kind, content FROM project_files WHERE project_id = $1 AND ${w.sql} ORDER BY path`, [projectId, ...w.params])).rows as Row[];
        const live = new Set(rows.filter((r) => r.kind !== 'deleted').map((r) => String(r.path)));
        for (const p of (await walkLocal(root, rel)).keys()) if (!live.has(p) && ![...live].some((l) => l.startsWith(`${p}/`))) await rm(path.join(root, p), { recursive: true, force: true });
        for (const r of rows) await applyRow(root, r);
        touchTree(root, rel, ...rows.map((r) => String(r.path)));
      }
    });
  }

  /** Brings the local copy up to the store's version; returns that version. */
  async sync(projectId: string): Promise<number> {
    const paths = projectPaths(this.dataDir, projectId);
    ensureProjectDirs(paths);
    const headOf = async () => (await this.pool.query('SELECT version FROM project_trees WHERE project_id = $1', [projectId])).rows[0] as Row | undefined;
    // Up to date (the common case before a read): one query, no wait for the project lock.
    const quick = await headOf();
    if (quick && this.localVersion(projectId) >= Number(quick.version)) return this.localVersion(projectId);
    return projectLock(paths.files).run(async () => {
      let head = await headOf();
      if (!head) {
        // Nothing published yet: this copy becomes the first version (the first daemon of a cluster seeds it).
        const seeded = await this.publish(projectId, { action: 'seed', paths: [''] });
        if (seeded >= 0) return seeded;
        head = (await headOf())!;
      }
      const target = Number(head.version);
      const from = this.localVersion(projectId);
      if (from >= target) return from;
      const rows = (
        await this.pool.query(
          `SELECT path, kind, content, version FROM project_files WHERE project_id = $1 AND version > $2 ${from === 0 ? "AND kind <> 'deleted'" : ''} ORDER BY version, path`,
          [projectId, from],
        )
      ).rows as Row[];
      let reached = from;
      for (const r of rows) {
        await applyRow(paths.files, r);
        reached = Math.max(reached, Number(r.version));
      }
      // The listing index learns of these writes now, not when its watcher reports them.
      touchTree(paths.files, ...rows.map((r) => String(r.path)));
      if (from === 0) {
        // A data directory that never synced: entries the store does not have go.
        const live = new Set(rows.map((r) => String(r.path)));
        for (const p of [...(await walkLocal(paths.files, '')).keys()].sort().reverse()) {
          if (!live.has(p)) {
            await rm(path.join(paths.files, p), { recursive: true, force: true });
            touchTree(paths.files, p);
          }
        }
      }
      this.#setLocal(projectId, Math.max(reached, target));
      if (rows.length > 0) this.logger.log('debug', `project ${projectId}: files synced to version ${target} (${rows.length} change(s))`);
      return Math.max(reached, target);
    });
  }

  /** Versions of every project in the store (one query; the heartbeat compares them with the local ones). */
  async storeVersions(): Promise<Map<string, number>> {
    const rows = (await this.pool.query('SELECT p.id, t.version FROM projects p LEFT JOIN project_trees t ON t.project_id = p.id')).rows as Row[];
    return new Map(rows.map((r) => [String(r.id), r.version === null ? -1 : Number(r.version)]));
  }

  /** Syncs every project whose store version differs from the local one. */
  async syncAll(): Promise<void> {
    for (const [projectId, v] of await this.storeVersions()) {
      if (v === -1 || v > this.localVersion(projectId)) {
        await this.sync(projectId).catch((err) => this.logger.log('error', `project ${projectId}: file sync failed: ${(err as Error).message}`));
      }
    }
  }
}


/** `files/` and an empty `env.yaml` for a project this data directory has not seen yet. */
function ensureProjectDirs(paths: ReturnType<typeof projectPaths>): void {
  if (existsSync(paths.files)) return;
  mkdirSync(paths.files, { recursive: true });
  if (!existsSync(paths.envFile)) writeFileSync(paths.envFile, '# connections of this project (per daemon: see docs/cluster.md)\nconnections: {}\n');
}

/** One stored entry onto the local copy, a file by write-then-rename. */
async function applyRow(root: string, r: Row): Promise<void> {
  const abs = path.join(root, String(r.path));
  const st = await lstat(abs).catch(() => null);
  if (r.kind === 'deleted') {
    if (st) await rm(abs, { recursive: true, force: true });
    return;
  }
  if (r.kind === 'dir') {
    if (st && !st.isDirectory()) await rm(abs, { force: true });
    await mkdir(abs, { recursive: true });
    return;
  }
  const content = r.content as Buffer;
  if (st?.isFile() && digest(await readFile(abs)) === digest(content)) return;
  if (st && !st.isFile()) await rm(abs, { recursive: true, force: true });
  await mkdir(path.dirname(abs), { recursive: true });
  const tmp = path.join(path.dirname(abs), `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  await writeFile(tmp, content);
  await rename(tmp, abs);
}
