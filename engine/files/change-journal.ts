/**
 * What changed under a directory, and since when: the daemon's own writes
 * (save, delete, rename, git pull, cluster sync — everything that calls
 * `touchTree`) are recorded the moment they are made, everything else
 * (an operator editing files) when the file-system watcher on its directory
 * reports it (Node's per-directory `fs.watch`, unref'ed; milliseconds later).
 * A compile that keeps its project in memory asks `since(mark)` instead of
 * stat-ing every file (10,000 stats took ≈30 ms — most of recompiling after
 * one edit).
 *
 * The journal answers `undefined` — "look at everything" — whenever it may
 * have missed something: a watcher error or overflow (an event without a
 * file name), a directory created, removed or renamed (its files were never
 * watched), a symlinked directory (its target is not watched), or more than
 * MAX_PATHS paths changed since the mark. Paths are relative to the root,
 * `/`-separated; hidden entries and `node_modules` are neither watched nor
 * reported, as the build's walk skips them.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { isTempName } from './atomic-write.js';

/** More changed paths than this and older marks are answered `undefined` (a full check is cheaper than the list). */
const MAX_PATHS = 4096;

const skipped = (name: string) => name.startsWith('.') || name === 'node_modules';

/** What a compile asks of a journal: the journal itself, or its snapshot on a worker thread (journalView). */
export interface ChangeView {
  readonly root: string;
  /** Which journal this is: a mark means something only to the journal that gave it. */
  readonly id: string;
  mark(): number;
  since(mark: number): string[] | undefined;
}

/** A journal's state as plain data, for a compile on a worker thread (the daemon's pipeline build steps). */
export interface JournalSnapshot {
  readonly root: string;
  readonly id: string;
  readonly seq: number;
  readonly lostAt: number;
  readonly closed: boolean;
  readonly changed: readonly (readonly [string, number])[];
}

function changedSince(s: Omit<JournalSnapshot, 'root' | 'id'>, mark: number): string[] | undefined {
  if (s.closed || mark < s.lostAt || mark > s.seq) return undefined;
  const out: string[] = [];
  for (const [rel, seq] of s.changed) if (seq > mark) out.push(rel);
  return out;
}

/** A snapshot's answers: as the journal answered when it was taken. */
export function journalView(s: JournalSnapshot): ChangeView {
  return { root: s.root, id: s.id, mark: () => s.seq, since: (mark) => changedSince(s, mark) };
}

export class ChangeJournal implements ChangeView {
  readonly id = randomUUID();
  /** Increases with every recorded change; a mark is its value at the time. */
  #seq = 0;
  /** Relative path → sequence number of its last change. */
  readonly #changed = new Map<string, number>();
  /** Marks before this cannot be answered. */
  #lostAt = 0;
  readonly #watchers = new Map<string, FSWatcher>();
  #closed = false;

  constructor(readonly root: string) {
    this.#watchTree('');
  }

  /** A point in time for `since`. */
  mark(): number {
    return this.#seq;
  }

  /** Whether `since` can answer at all (watchers running). */
  get usable(): boolean {
    return !this.#closed;
  }

  /** Relative paths changed after `mark`, or undefined when the journal cannot tell. */
  since(mark: number): string[] | undefined {
    return changedSince({ closed: this.#closed, lostAt: this.#lostAt, seq: this.#seq, changed: [...this.#changed] }, mark);
  }

  snapshot(): JournalSnapshot {
    return { root: this.root, id: this.id, seq: this.#seq, lostAt: this.#lostAt, closed: this.#closed, changed: [...this.#changed] };
  }

  /** The daemon's own write of `rel` (relative to the root). */
  touch(rel: string): void {
    if (rel === '' || rel.split('/').some(skipped) || isTempName(path.posix.basename(rel))) return;
    this.#changedPath(rel);
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }

  #record(rel: string): void {
    this.#changed.set(rel, ++this.#seq);
    if (this.#changed.size > MAX_PATHS) {
      this.#changed.clear();
      this.#lostAt = this.#seq;
    }
  }

  /** Track lost before now; `dirRel` (a directory that appeared or moved) is watched from now on. */
  #lose(dirRel?: string): void {
    this.#lostAt = ++this.#seq;
    if (dirRel !== undefined) this.#watchTree(dirRel);
  }

  /** Watches `dirRel` and every directory under it; a symlinked directory makes the journal unusable. */
  #watchTree(dirRel: string): void {
    if (this.#closed) return;
    const abs = dirRel === '' ? this.root : path.join(this.root, dirRel);
    let entries;
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      if (dirRel === '') this.close();
      return;
    }
    if (!this.#watchers.has(dirRel)) {
      try {
        const w = watch(abs, (_event, filename) => this.#onEvent(dirRel, filename));
        w.on('error', () => {
          w.close();
          this.#watchers.delete(dirRel);
          if (dirRel === '') this.close();
          else this.#lose();
        });
        w.unref();
        this.#watchers.set(dirRel, w);
      } catch {
        this.close(); // over the watch limit: every compile checks every file, as without a journal
        return;
      }
    }
    for (const e of entries) {
      if (skipped(e.name)) continue;
      const rel = dirRel === '' ? e.name : `${dirRel}/${e.name}`;
      if (e.isDirectory()) this.#watchTree(rel);
      else if (e.isSymbolicLink() && statSync(path.join(abs, e.name), { throwIfNoEntry: false })?.isDirectory()) this.close();
    }
  }

  #onEvent(dirRel: string, filename: string | Buffer | null): void {
    if (filename === null) return this.#lose();
    const base = filename.toString();
    if (skipped(base) || isTempName(base)) return;
    this.#changedPath(dirRel === '' ? base : `${dirRel}/${base}`);
  }

  /**
   * Records `rel`. A directory that appeared, vanished or was replaced loses
   * track: the files under it came or went without an event of their own.
   */
  #changedPath(rel: string): void {
    this.#record(rel);
    const wasDir = this.#watchers.has(rel);
    const isDir = statSync(path.join(this.root, rel), { throwIfNoEntry: false })?.isDirectory() === true;
    if (wasDir) {
      // Gone or replaced: its watchers watch what is no longer there.
      for (const [r, w] of this.#watchers) {
        if (r === rel || r.startsWith(`${rel}/`)) {
          w.close();
          this.#watchers.delete(r);
        }
      }
    }
    if (wasDir || isDir) this.#lose(isDir ? rel : undefined);
  }
}

/** Journals by root; null: the directory could not be watched when first asked (checked once, not on every compile). */
const journals = new Map<string, ChangeJournal | null>();

/** The journal of `root` (absolute), started on first use; undefined when the directory cannot be watched. */
export function changeJournal(root: string): ChangeJournal | undefined {
  const j = journals.get(root);
  if (j === null) return undefined;
  if (j !== undefined && j.usable) return j;
  const made = new ChangeJournal(root);
  journals.set(root, made.usable ? made : null);
  return made.usable ? made : undefined;
}

/** The daemon's own writes of `names` (relative to `root`): recorded in every journal at or under `root`. */
export function touchJournals(root: string, names: readonly string[]): void {
  for (const j of [...journals.values()]) {
    if (j === null) continue;
    const prefix = j.root === root ? '' : j.root.startsWith(`${root}/`) ? j.root.slice(root.length + 1) + '/' : undefined;
    if (prefix === undefined) continue;
    for (const n of names) {
      if (prefix === '') j.touch(n);
      else if (n.startsWith(prefix)) j.touch(n.slice(prefix.length));
      else if (prefix.startsWith(`${n}/`)) {
        // The journal's own directory (or one above it) was written: its watchers may watch what is gone.
        j.close();
        journals.delete(j.root);
        break;
      }
    }
  }
}

export function closeChangeJournals(): void {
  for (const j of journals.values()) j?.close();
  journals.clear();
}
