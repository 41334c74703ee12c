/**
 * One compile's use of the compile cache (compile-cache.ts): what was there
 * when it started, which model files are unchanged since, and what this
 * compile used or made — which becomes the directory's store when it ends.
 */
import { readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import type { ChangeView } from '../files/change-journal.js';
import { recordingLogger, type Logger } from '../log.js';
import { affectsWalk, type DiscoveredFile } from '../project/discover.js';
import type { FrontMatter } from '../project/front-matter.js';
import type { LoadCache, ModelSource, SeedSource, WalkWatch } from '../project/load.js';
import { hasStamp, keepStore, memoOf, openStore, saveStore, statStamp, type CacheEntry, type CacheLocation, type LastCompile, type ParsedConfig, type SourceEntry, type Stamp, type Store, type StoredWalk } from './compile-cache.js';
import type { BuildConfig } from '../project/config.js';
import type { CompileMemo, JournalMark, LogLine, WalkMemo } from './compile-memo.js';
import type { StatAhead } from './stat-ahead.js';

export class CacheSession implements LoadCache {
  private readonly usedModels = new Map<string, CacheEntry>();
  private readonly usedSources = new Map<string, SourceEntry>();
  private readonly usedConfigs = new Map<string, ParsedConfig>();
  /** Model files whose stat stamp is the cached one: their text is what the cache holds. */
  private readonly unchanged = new Set<string>();
  /** Entries and sources made by this compile (not taken from the cache). */
  private fresh = 0;
  private made: LastCompile | undefined;
  /** This compile's walk (made or reused). */
  private walked: StoredWalk | undefined;
  private readonly now = Date.now();
  /** Stat stamps of the model files read by this compile (undefined when too new to have one). */
  private readonly stamps = new Map<string, Stamp | undefined>();
  /**
   * What this directory's compiles in this process made (compile-memo.ts);
   * undefined for a cache file (a command-line build compiles once).
   */
  readonly memo: CompileMemo | undefined;
  /** The journal's position as this compile starts. */
  private readonly mark: JournalMark | undefined;
  /** Files (absolute) changed since the memo's last successful compile, per the journal; undefined: unknown (check every file). */
  private readonly changed: ReadonlySet<string> | undefined;

  constructor(
    readonly location: CacheLocation,
    private readonly opened: Store,
    journal?: ChangeView,
    /** The model files' stats, made ahead on a helper thread (stat-ahead.ts). */
    private readonly ahead?: StatAhead,
  ) {
    this.memo = location.dir === undefined ? memoOf(location.root) : undefined;
    if (journal === undefined || this.memo === undefined) return;
    this.mark = { journal, mark: journal.mark() };
    const prev = this.memo.journal;
    const rels = prev !== undefined && prev.journal.id === journal.id ? journal.since(prev.mark) : undefined;
    if (rels !== undefined) this.changed = new Set(rels.map((rel) => `${journal.root}/${rel}`));
  }

  /** No entry at all (no cache file yet, or an unreadable one): every model will be rendered. */
  get empty(): boolean {
    return this.opened.models.size === 0;
  }

  model(key: string): CacheEntry | undefined {
    return this.opened.models.get(key);
  }

  keepModel(key: string, e: CacheEntry, made: boolean): void {
    this.usedModels.set(key, e);
    if (made) this.fresh++;
  }

  parsedConfig(key: string): ParsedConfig | undefined {
    const hit = this.opened.configs.get(key);
    if (hit !== undefined) this.usedConfigs.set(key, hit);
    return hit;
  }

  keepConfig(key: string, config: BuildConfig, logs: readonly LogLine[]): void {
    this.usedConfigs.set(key, { config, logs });
    this.fresh++;
  }

  /**
   * A model file's text split into front-matter and body: from the cache when
   * its stat stamp is unchanged, else read (and parsed by `parse`).
   */
  readModelSource(abs: string, parse: (text: string) => FrontMatter): FrontMatter {
    const hit = this.opened.sources.get(abs);
    const stamp = statStamp(abs, this.now, hit?.[0], this.ahead);
    if (hit !== undefined && stamp === hit[0]) {
      this.usedSources.set(abs, hit);
      this.unchanged.add(abs);
      return { config: hit[1], body: hit[2] };
    }
    const parsed = parse(readFileSync(abs, 'utf8'));
    this.stamps.set(abs, stamp);
    if (stamp !== undefined) {
      this.usedSources.set(abs, [stamp, parsed.config, parsed.body]);
      this.fresh++;
    }
    return parsed;
  }

  /**
   * The walk of the last compile — when the journal says no file was added,
   * removed or renamed since (and no file a walk would list or warn about
   * appeared), or when every directory it listed still has the stat stamp
   * it had just before it was listed (an entry added, removed or renamed
   * changes its directory's times) — else `run()`'s. Kept for the next
   * compile once this one succeeds (`finish`).
   */
  walk(key: string, run: (watch?: WalkWatch) => { files: readonly DiscoveredFile[]; ignored: readonly string[] }): { files: readonly DiscoveredFile[]; ignored: readonly string[]; reused?: boolean } {
    const prev = this.memo?.walk;
    if (prev !== undefined && prev.key === key && this.changed !== undefined && this.walkHolds(prev)) {
      this.walked = { key, files: prev.files, ignored: prev.ignored, dirs: this.opened.walk?.files === prev.files ? this.opened.walk.dirs : undefined };
      return { ...prev, reused: true };
    }
    const stored = this.opened.walk;
    if (stored !== undefined && stored.key === key && stored.dirs !== undefined && stored.dirs.every(([abs, stamp]) => hasStamp(abs, this.now, stamp))) {
      this.walked = stored;
      return { files: stored.files, ignored: stored.ignored, reused: true };
    }
    const dirs: [string, Stamp][] = [];
    let trackable = true;
    const made = run({
      onDir: (abs) => {
        const stamp = statStamp(abs, this.now);
        if (stamp === undefined) trackable = false;
        else dirs.push([abs, stamp]);
      },
      onLink: () => {
        trackable = false;
      },
    });
    this.walked = { key, files: made.files, ignored: made.ignored, dirs: trackable ? dirs : undefined };
    return made;
  }

  private walkHolds(walk: WalkMemo): boolean {
    if (this.changed!.size === 0) return true;
    const known = (walk.known ??= new Set(walk.files.map((f) => f.abs)));
    for (const abs of this.changed!) {
      if (known.has(abs) ? statSync(abs, { throwIfNoEntry: false }) === undefined : affectsWalk(posix.basename(abs))) return false;
    }
    return true;
  }

  /**
   * A model file's loaded form: the last compile's object when the file and
   * `loadKey` are unchanged since (its load warnings logged again), else
   * `load`'s, kept for the next compile.
   */
  loadModel(f: DiscoveredFile, loadKey: string, logger: Logger, load: (logger: Logger) => ModelSource): ModelSource {
    const memo = this.memo;
    if (memo === undefined) return load(logger);
    const prev = memo.models.get(f.abs);
    if (prev !== undefined && prev.loadKey === loadKey && prev.source.file === f.file && this.unchangedSince(f.abs, prev.stamp)) {
      for (const [level, message] of prev.logs) logger.log(level, message);
      const entry = this.opened.sources.get(f.abs);
      // The cache's entry is this file's text when its stamp is the one this object was loaded from.
      if (entry !== undefined && prev.stamp !== undefined && entry[0] === prev.stamp) {
        this.usedSources.set(f.abs, entry);
        this.unchanged.add(f.abs);
      }
      return prev.source;
    }
    const logs: LogLine[] = [];
    const source = load(recordingLogger(logger, logs));
    memo.models.set(f.abs, { loadKey, stamp: this.stamps.get(f.abs), source, logs });
    return source;
  }

  /** A seed's loaded form: the last compile's object under the same `loadKey` (a seed's form depends on its path alone). */
  loadSeed(f: DiscoveredFile, loadKey: string, logger: Logger, load: (logger: Logger) => SeedSource): SeedSource {
    const memo = this.memo;
    if (memo === undefined) return load(logger);
    const prev = memo.seeds.get(f.abs);
    if (prev !== undefined && prev.loadKey === loadKey && prev.source.file === f.file && prev.source.format === f.format) {
      for (const [level, message] of prev.logs) logger.log(level, message);
      return prev.source;
    }
    const logs: LogLine[] = [];
    const source = load(recordingLogger(logger, logs));
    memo.seeds.set(f.abs, { loadKey, source, logs });
    return source;
  }

  /** Unchanged since the memo's compile: per the journal, or by a stat stamp equal to the one it was read with. */
  private unchangedSince(abs: string, stamp: Stamp | undefined): boolean {
    if (this.changed !== undefined) return !this.changed.has(abs);
    return stamp !== undefined && hasStamp(abs, this.now, stamp);
  }

  /** Whether the model file at `abs` is known unchanged since the cache's last compile (its stat stamp matched). */
  isUnchanged(abs: string): boolean {
    return this.unchanged.has(abs);
  }

  /** The cache's last compile when it was of `variant`. */
  lastCompile(variant: string): LastCompile | undefined {
    const last = this.opened.last;
    return last !== undefined && last.variant === variant ? last : undefined;
  }

  /** What this compile was (compile.ts), kept for the next one: the cache's own LastCompile object when it was the same. */
  recordCompile(made: LastCompile): void {
    this.made = made;
  }

  /**
   * Ends the compile: what it used becomes the directory's store in memory.
   * Model entries of other variants (another target, --prod vs dev) stay, up
   * to as many again as this compile used, so switching between two
   * variants does not thrash. With a cache file and something new to keep,
   * returns the write of the file — the command line runs it after its
   * output is out; nothing to write (an unchanged project): undefined.
   */
  finish(logger: Logger): (() => void) | undefined {
    this.ahead?.stop();
    if (this.memo !== undefined) {
      if (this.mark !== undefined) this.memo.journal = this.mark;
      if (this.walked !== undefined) this.memo.walk = this.walked;
    }
    const loc = this.location;
    const opened = this.opened;
    const sources = this.usedSources;
    const last = this.made ?? opened.last;
    const keepOthers = Math.min(opened.models.size, this.usedModels.size * 2 + 16);
    // Unchanged: every entry and source was taken from the cache, and nothing it held is dropped.
    // A walk that could not be trusted by its directories' stamps is not kept: the next compile walks.
    const walk = this.walked?.dirs !== undefined ? this.walked : undefined;
    const dirty = this.fresh > 0 || keepOthers !== opened.models.size || sources.size !== opened.sources.size || this.usedConfigs.size !== opened.configs.size || last !== opened.last || walk !== opened.walk;
    if (!dirty) {
      keepStore(loc, opened);
      return undefined;
    }
    const models = new Map(this.usedModels);
    for (const k of opened.models.keys()) {
      if (models.size >= keepOthers) break;
      if (!models.has(k)) models.set(k, opened.models.get(k)!);
    }
    const store: Store = { models, sources, configs: this.usedConfigs, last, ...(walk ? { walk } : {}), fileStamp: this.opened.fileStamp };
    keepStore(loc, store);
    const dir = loc.dir;
    return dir === undefined ? undefined : () => saveStore(loc.root, dir, store, logger);
  }
}

/** Opens the cache of a build directory for one compile (compile-cache.ts `openStore`); `journal`: what changed under it (the daemon). */
export function openCache(loc: CacheLocation, logger: Logger, journal?: ChangeView): CacheSession {
  const { store, ahead } = openStore(loc, logger);
  return new CacheSession(loc, store, journal, ahead);
}
