/**
 * Linux: the nice value of libuv's threadpool threads. In the daemon they
 * run DuckDB's work — the driver's async calls execute each statement on a
 * pool thread, and DuckDB's own threads, started from there when an
 * instance opens, inherit that thread's nice value — so a replication into
 * DuckDB competed at full priority with the thread serving requests.
 *
 * The pool is shared by the whole process and its threads carry no name,
 * so each one is asked who it is: `readlink('/proc/thread-self')` runs on a
 * pool thread and names that thread's id (never the main thread's, which
 * never runs pool work). Bursts of such calls run until every pool thread
 * has answered at least once (libuv starts them all together and keeps
 * them for the life of the process).
 */
import { readlink } from 'node:fs/promises';
import { setPriority } from 'node:os';

/** libuv's rule: `UV_THREADPOOL_SIZE`, 4 when unset or not a number, within 1…1024. */
function poolSize(): number {
  const n = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  return Number.isNaN(n) ? 4 : Math.min(1024, Math.max(1, n));
}

/** Bursts before giving up on a thread that never took a call (each burst takes well under a millisecond). */
const MAX_BURSTS = 200;

export interface ThreadpoolNiceness {
  /** Pool threads set to the nice value. */
  readonly reniced: number;
  /** libuv's thread count: more than `reniced` when some thread never answered or refused. */
  readonly expected: number;
}

/** Sets every libuv threadpool thread of this process to `niceness` (Linux; elsewhere a no-op). */
export async function reniceThreadpool(niceness: number): Promise<ThreadpoolNiceness> {
  const expected = poolSize();
  if (process.platform !== 'linux') return { reniced: 0, expected: 0 };
  const seen = new Set<number>();
  for (let burst = 0; burst < MAX_BURSTS && seen.size < expected; burst++) {
    const links = await Promise.all(Array.from({ length: 4 * expected }, () => readlink('/proc/thread-self')));
    for (const link of links) {
      const tid = Number(link.slice(link.lastIndexOf('/') + 1));
      if (tid !== process.pid) seen.add(tid);
    }
  }
  let reniced = 0;
  for (const tid of seen) {
    try {
      setPriority(tid, niceness);
      reniced++;
    } catch {
      // not permitted: that thread keeps the process's priority (the caller reports the count)
    }
  }
  return { reniced, expected };
}
