/**
 * The stat-ahead thread (stat-ahead.ts): gets the model files' paths in one
 * request and answers their stats in order, a batch at a time, as
 * `[mtimeMs, ctimeMs, size, ino]` per file (NaN × 4: missing). It imports
 * nothing of ours beyond types, so it starts in a few milliseconds.
 */
import { statSync } from 'node:fs';
import type { ThreadSide } from '../threads/blocking-thread.js';

/** Files per answer: few messages, yet the compile rarely waits for one. */
const BATCH = 64;

export interface StatBatch {
  /** Index of the batch's first file in the request. */
  readonly from: number;
  /** Four values per file. */
  readonly values: Float64Array;
}

export default function statAheadThread(side: ThreadSide<undefined>): void {
  side.onRequest((request) => {
    const paths = request as readonly string[];
    for (let from = 0; from < paths.length; from += BATCH) {
      const n = Math.min(BATCH, paths.length - from);
      const values = new Float64Array(n * 4);
      for (let k = 0; k < n; k++) {
        const st = statSync(paths[from + k]!, { throwIfNoEntry: false });
        values.set(st === undefined ? [NaN, NaN, NaN, NaN] : [st.mtimeMs, st.ctimeMs, st.size, st.ino], k * 4);
      }
      side.answer({ from, values } satisfies StatBatch, [values.buffer]);
    }
  });
}
