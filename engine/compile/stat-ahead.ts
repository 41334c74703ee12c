/**
 * The stat calls of a compile from a large cache file, made ahead on a helper
 * thread. A warm compile of 10,000 models spent ≈17 % of its main-thread time
 * in 10,000 `statSync` calls (a syscall, path checks and a Stats object with
 * four Dates each). The thread starts before the cache file is read (its
 * start-up overlaps the read), gets the model files the file names, and
 * stats them in order into shared memory while this thread decodes the
 * cache, loads the config and walks; `stamp()` takes a file's values from
 * there, waiting for the helper when it gets to a file first. A file stat'ed
 * ahead is stat'ed before the compile trusts its cached text, as before.
 * The helper (stat-ahead-thread.ts) imports no module of ours, so it starts
 * in a few milliseconds; a helper that fails or stalls leaves the files to a
 * `statSync` here. It is a BlockingThread: the compile waits for its answers
 * without turning the event loop (engine/threads/blocking-thread.ts).
 */
import { BlockingThread } from '../threads/blocking-thread.js';
import type { StatBatch } from './stat-ahead-thread.js';

/** Below this cache file size (≈2,000 models) the helper's start-up costs more than it saves. */
export const STAT_AHEAD_MIN_BYTES = 1 << 20;
/** How long to wait for the helper's next answer before stat'ing here. */
const STALL_MS = 1000;

export type StatValues = readonly [mtimeMs: number, ctimeMs: number, size: number, ino: number];

export class StatAhead {
  readonly #thread = new BlockingThread(import.meta.url, './stat-ahead-thread.js', { name: 'stat-ahead' });
  #at: Map<string, number> | undefined;
  /** Files answered so far (in request order) and their values, four per file. */
  #done = 0;
  #values: Float64Array | undefined;
  #stalled = false;

  /** `stallMs`: how long to wait for each answer (a test on a loaded machine waits longer than a compile should). */
  constructor(private readonly stallMs = STALL_MS) {}

  /** The files to stat, in the order they will most likely be asked for. */
  stat(paths: readonly string[]): void {
    this.#at = new Map(paths.map((p, i) => [p, i]));
    this.#values = new Float64Array(paths.length * 4);
    this.#thread.post(paths);
  }

  /** The file's values from the helper; null: missing; undefined: not one of its files, or the helper did not answer (stat it here). */
  values(abs: string): StatValues | null | undefined {
    const i = this.#at?.get(abs);
    if (i === undefined || this.#stalled) return undefined;
    const v = this.#values!;
    while (this.#done <= i) {
      const r = this.#thread.receive<StatBatch>(this.stallMs);
      if (r.kind !== 'answer') {
        this.#stalled = true;
        this.stop();
        return undefined;
      }
      v.set(r.answer.values, r.answer.from * 4);
      this.#done = r.answer.from + r.answer.values.length / 4;
    }
    const mtimeMs = v[i * 4]!;
    return Number.isNaN(mtimeMs) ? null : [mtimeMs, v[i * 4 + 1]!, v[i * 4 + 2]!, v[i * 4 + 3]!];
  }

  stop(): void {
    this.#thread.stop();
  }
}
