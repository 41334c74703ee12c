/**
 * One compile's use of the compile cache (compile-cache.ts): what was there
 * when it started, which model files are unchanged since, and what this
 * compile used or made — which becomes the directory's store when it ends.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { keepStore, openStore, saveStore, statStamp, type CacheEntry, type CacheLocation, type LastCompile, type SourceEntry, type Store } from './compile-cache.js';

export class CacheSession {
  private readonly usedModels = new Map<string, CacheEntry>();
  private readonly usedSources = new Map<string, SourceEntry>();
  /** Model files whose stat stamp is the cached one: their text is what the cache holds. */
  private readonly unchanged = new Set<string>();
  /** Entries and sources made by this compile (not taken from the cache). */
  private fresh = 0;
  private made: LastCompile | undefined;
  private readonly now = Date.now();

  constructor(
    readonly location: CacheLocation,
    private readonly opened: Store,
  ) {}

  model(key: string): CacheEntry | undefined {
    return this.opened.models.get(key);
  }

  keepModel(key: string, e: CacheEntry, made: boolean): void {
    this.usedModels.set(key, e);
    if (made) this.fresh++;
  }

  /**
   * A model file's text split into front-matter and body: from the cache when
   * its stat stamp is unchanged, else read (and parsed by `parse`).
   */
  readSource(abs: string, parse: (text: string) => { config: Record<string, unknown> | null; body: string }): { config: Record<string, unknown> | null; body: string } {
    const stamp = statStamp(abs, this.now);
    const hit = stamp === undefined ? undefined : this.opened.sources.get(abs);
    if (hit !== undefined && hit[0] === stamp) {
      this.usedSources.set(abs, hit);
      this.unchanged.add(abs);
      return { config: hit[1], body: hit[2] };
    }
    const parsed = parse(readFileSync(abs, 'utf8'));
    if (stamp !== undefined) {
      this.usedSources.set(abs, [stamp, parsed.config, parsed.body]);
      this.fresh++;
    }
    return parsed;
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
    const loc = this.location;
    const opened = this.opened;
    const sources = this.usedSources;
    const last = this.made ?? opened.last;
    const keepOthers = Math.min(opened.models.size, this.usedModels.size * 2 + 16);
    // Unchanged: every entry and source was taken from the cache, and nothing it held is dropped.
    const dirty = this.fresh > 0 || keepOthers !== opened.models.size || sources.size !== opened.sources.size || last !== opened.last;
    if (!dirty) {
      keepStore(loc, opened);
      return undefined;
    }
    const models = new Map(this.usedModels);
    for (const k of opened.models.keys()) {
      if (models.size >= keepOthers) break;
      if (!models.has(k)) models.set(k, opened.models.get(k)!);
    }
    const store: Store = { models, sources, last, fileStamp: this.opened.fileStamp };
    keepStore(loc, store);
    if (loc.dir === undefined) return undefined;
    return () => saveStore(loc, store, logger);
  }
}

/** Opens the cache of a build directory for one compile (compile-cache.ts `openStore`). */
export function openCache(loc: CacheLocation, logger: Logger): CacheSession {
  return new CacheSession(loc, openStore(loc, logger));
}
