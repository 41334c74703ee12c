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
 * The helper is plain JavaScript with no module of ours, so it starts in a
 * few milliseconds; a helper that fails or stalls leaves the files to a
 * `statSync` here.
 */
import { Worker } from 'node:worker_threads';

/** Below this cache file size (≈2,000 models) the helper's start-up costs more than it saves. */
export const STAT_AHEAD_MIN_BYTES = 1 << 20;
/** How long to wait for the helper's next file before stat'ing here. */
const STALL_MS = 1000;

// workerData: {progress: SharedArrayBuffer (Int32 count done), values: SharedArrayBuffer (Float64 × 4 per file)} arrives
// with the paths in one message. A missing file is NaN.
const HELPER = `
const { statSync } = require('node:fs');
const { parentPort } = require('node:worker_threads');
parentPort.once('message', ({ paths, progress, values }) => {
  const done = new Int32Array(progress);
  const out = new Float64Array(values);
  for (let i = 0; i < paths.length; i++) {
    const st = statSync(paths[i], { throwIfNoEntry: false });
    out.set(st === undefined ? [NaN, NaN, NaN, NaN] : [st.mtimeMs, st.ctimeMs, st.size, st.ino], i * 4);
    if ((i & 31) === 31 || i === paths.length - 1) {
      Atomics.store(done, 0, i + 1);
      Atomics.notify(done, 0);
    }
  }
});
`;

export type StatValues = readonly [mtimeMs: number, ctimeMs: number, size: number, ino: number];

export class StatAhead {
  readonly #worker: Worker;
  #at: Map<string, number> | undefined;
  #done: Int32Array | undefined;
  #values: Float64Array | undefined;
  #stalled = false;

  constructor() {
    // No --import of the parent (tsx under the tests): the helper needs none.
    this.#worker = new Worker(HELPER, { eval: true, execArgv: [] });
    this.#worker.on('error', () => (this.#stalled = true));
    this.#worker.unref();
  }

  /** The files to stat, in the order they will most likely be asked for. */
  stat(paths: readonly string[]): void {
    const progress = new SharedArrayBuffer(4);
    const values = new SharedArrayBuffer(paths.length * 4 * 8);
    this.#at = new Map(paths.map((p, i) => [p, i]));
    this.#done = new Int32Array(progress);
    this.#values = new Float64Array(values);
    this.#worker.postMessage({ paths, progress, values });
  }

  /** The file's values from the helper; null: missing; undefined: not one of its files, or the helper did not answer (stat it here). */
  values(abs: string): StatValues | null | undefined {
    const i = this.#at?.get(abs);
    if (i === undefined || this.#stalled) return undefined;
    const done = this.#done!;
    let seen: number;
    while ((seen = Atomics.load(done, 0)) <= i) {
      if (Atomics.wait(done, 0, seen, STALL_MS) === 'timed-out') {
        this.#stalled = true;
        this.stop();
        return undefined;
      }
    }
    const v = this.#values!;
    const mtimeMs = v[i * 4]!;
    return Number.isNaN(mtimeMs) ? null : [mtimeMs, v[i * 4 + 1]!, v[i * 4 + 2]!, v[i * 4 + 3]!];
  }

  stop(): void {
    void this.#worker.terminate();
  }
}
