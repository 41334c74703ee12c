/**
 * Applies a pull plan to the project tree all or nothing (a
 * failed pull leaves the tree exactly as it was).
 *
 * Before anything changes, the whole plan is written as a journal
 * (`<git dir>/service-pull/journal.json`, fsync'ed). Each file is backed up
 * before it is touched: a deleted file is moved into the journal directory,
 * an updated one is hard-linked there first (the atomic write then replaces
 * the link in the tree, so the backup keeps the old content). Deletes run
 * before writes, so a file that became a directory in the repository (or
 * the reverse) is cleared out of the way first.
 *
 * Undo walks the journal backwards and is idempotent and conditional, so
 * the same code rolls back a failure in this process and, on the next pull,
 * an apply that a crash interrupted:
 *   - a write whose content is the planned blob is taken back (the backup
 *     moves back over it, or a created file is removed); any other content
 *     means the write never landed and is left alone;
 *   - a deleted file comes back from its backup unless something is there again;
 *   - directories created for writes are removed again if they end up empty.
 * Commit removes the journal; that is the point after which a pull counts.
 */
import { copyFile, link, mkdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { ProjectFile, ProjectTree } from '../files/project-tree.js';
import { fileOid } from './local-files.js';
import type { PullPlan } from './pull-plan.js';

type JournalAction =
  | { readonly op: 'delete'; readonly name: string; readonly backup: string }
  | { readonly op: 'write'; readonly name: string; readonly oid: string; readonly backup: string | null; readonly keepDirs: readonly string[] };

interface Journal {
  readonly actions: readonly JournalAction[];
}

export interface AppliedPlan {
  readonly created: ProjectFile[];
  readonly updated: ProjectFile[];
  readonly deleted: string[];
}

const JOURNAL_DIR = 'service-pull';
const JOURNAL_FILE = 'journal.json';

/** The parent directories of a name, nearest last (`a/b/c.txt` → `a`, `a/b`). */
function ancestors(name: string): string[] {
  const parts = name.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

const exists = (abs: string): Promise<boolean> => stat(abs).then(() => true, () => false);

export class TreeTransaction {
  readonly #tree: ProjectTree;
  readonly #dir: string;
  readonly #journal: Journal;

  private constructor(tree: ProjectTree, dir: string, journal: Journal) {
    this.#tree = tree;
    this.#dir = dir;
    this.#journal = journal;
  }

  /** Writes the journal of `plan`; call under the project lock, after `recoverInterruptedPull`. */
  static async begin(tree: ProjectTree, gitDir: string, plan: PullPlan): Promise<TreeTransaction> {
    const dir = path.join(gitDir, JOURNAL_DIR);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const actions: JournalAction[] = plan.deletes.map((name, i) => ({ op: 'delete', name, backup: `d${i}` }));
    const dirExists = new Map<string, Promise<boolean>>();
    const isDir = (rel: string) => {
      let hit = dirExists.get(rel);
      if (hit === undefined) {
        hit = stat(path.join(tree.root, rel)).then((s) => s.isDirectory(), () => false);
        dirExists.set(rel, hit);
      }
      return hit;
    };
    for (const [i, w] of plan.writes.entries()) {
      const keepDirs: string[] = [];
      for (const d of ancestors(w.name)) if (await isDir(d)) keepDirs.push(d);
      actions.push({ op: 'write', name: w.name, oid: w.oid, backup: w.created ? null : `w${i}`, keepDirs });
    }
    await writeFileAtomic(path.join(dir, JOURNAL_FILE), Buffer.from(JSON.stringify({ actions } satisfies Journal)));
    return new TreeTransaction(tree, dir, { actions });
  }

  /** Runs the journal's actions; `content` gives a planned blob's bytes. Throws on the first failure (then call rollback). */
  async apply(content: (oid: string) => Promise<Buffer>): Promise<AppliedPlan> {
    const out: AppliedPlan = { created: [], updated: [], deleted: [] };
    for (const a of this.#journal.actions) {
      const abs = this.#tree.resolve(a.name);
      if (a.op === 'delete') {
        await rename(abs, path.join(this.#dir, a.backup));
        await removeEmptyParents(this.#tree, a.name, []);
        out.deleted.push(a.name);
        continue;
      }
      const data = await content(a.oid);
      // Something other than a file in the way has no backup: the save below refuses it (409) and the pull rolls back.
      if (a.backup !== null && (await stat(abs).then((st) => st.isFile(), () => false))) await backup(abs, path.join(this.#dir, a.backup));
      const entry = await this.#tree.save({ name: a.name, body: data.toString('base64'), encoding: 'base64' });
      (a.backup === null ? out.created : out.updated).push(entry);
    }
    return out;
  }

  /** Puts the tree back as it was before `apply` (whatever part of it ran). */
  async rollback(): Promise<void> {
    await undo(this.#tree, this.#dir, this.#journal);
    await rm(this.#dir, { recursive: true, force: true });
  }

  /** The pull's changes stay: the journal and backups go. */
  async commit(): Promise<void> {
    await rm(path.join(this.#dir, JOURNAL_FILE), { force: true });
    await rm(this.#dir, { recursive: true, force: true });
  }
}

/** Removes the directories above `name` that are empty now, deepest first, up to `keep` or the root. */
async function removeEmptyParents(tree: ProjectTree, name: string, keep: readonly string[]): Promise<void> {
  for (const d of ancestors(name).reverse()) {
    if (keep.includes(d)) return;
    try {
      await rmdir(path.join(tree.root, d));
    } catch {
      return; // not empty (or already gone): nothing above it can be empty either
    }
  }
}

/** Hard link when possible (same file system), else a copy. */
async function backup(abs: string, to: string): Promise<void> {
  try {
    await link(abs, to);
  } catch {
    await copyFile(abs, to);
  }
}

async function undo(tree: ProjectTree, dir: string, journal: Journal): Promise<void> {
  const oidLength = (journal.actions.find((a) => a.op === 'write') as { oid?: string } | undefined)?.oid?.length ?? 40;
  for (const a of [...journal.actions].reverse()) {
    const abs = path.join(tree.root, a.name);
    const saved = a.backup === null ? null : path.join(dir, a.backup);
    if (a.op === 'delete') {
      if (saved !== null && (await exists(saved))) {
        if (await exists(abs)) await rm(saved, { force: true });
        else {
          await mkdir(path.dirname(abs), { recursive: true });
          await rename(saved, abs);
        }
      }
      continue;
    }
    const landed = (await fileOid(abs, oidLength)) === a.oid;
    if (saved !== null && (await exists(saved))) {
      if (landed) await rename(saved, abs);
      else await rm(saved, { force: true });
    } else if (saved === null && landed) {
      await rm(abs, { force: true });
    }
    await removeEmptyParents(tree, a.name, a.keepDirs);
  }
}

/**
 * Rolls back a pull that a crash interrupted between journal and commit;
 * true when there was one. Call under the project lock before a new pull.
 */
export async function recoverInterruptedPull(tree: ProjectTree, gitDir: string): Promise<boolean> {
  const dir = path.join(gitDir, JOURNAL_DIR);
  let journal: Journal | null = null;
  try {
    journal = JSON.parse(await readFile(path.join(dir, JOURNAL_FILE), 'utf8')) as Journal;
  } catch {
    // no journal (nothing was applied), or a torn one (written atomically, so the apply never began)
  }
  if (journal !== null) await undo(tree, dir, journal);
  await rm(dir, { recursive: true, force: true });
  return journal !== null;
}
