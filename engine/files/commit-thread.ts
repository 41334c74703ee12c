/**
 * One dedicated thread that renames staged files over their targets, a batch
 * per message (see ProjectTree.commitBatch). On ext4 a rename waits for the
 * journal while other writers fsync; done on the main thread that wait
 * stalls every request, and done in libuv's threadpool it queues behind those
 * very fsyncs. A thread of its own, fed a whole batch per round trip, leaves
 * the main thread free and pays one hand-over per batch, not per file.
 *
 * For each item, in order: stat the target (a directory there is a
 * conflict), give the temporary the target's permission bits when they
 * differ, rename. A failed item's temporary is removed. The batch stops at
 * the first item whose temporary or directory has gone (a delete or pull
 * came first): the caller writes that one afresh, in order, before sending
 * the rest. The thread holds no lock; the caller holds the project lock for
 * the whole batch.
 */
import { Worker } from 'node:worker_threads';

export interface CommitItem {
  readonly temp: string;
  readonly target: string;
  /** Permission bits of the temporary as written. */
  readonly tempMode: number;
}

export type CommitReply =
  | { readonly kind: 'ok' }
  /** A directory is at the target. */
  | { readonly kind: 'directory' }
  /** The temporary or its directory is gone (ENOENT/ENOTDIR); the batch stopped here. */
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly op: 'stat' | 'rename'; readonly code?: string; readonly message: string };

// Plain CommonJS run with `eval`, so the same code serves the compiled build and tsx test runs.
const SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
const { chmodSync, renameSync, rmSync, statSync } = require('node:fs');
const gone = (e) => e && (e.code === 'ENOENT' || e.code === 'ENOTDIR');
const drop = (temp) => { try { rmSync(temp, { force: true }); } catch {} };
parentPort.on('message', ({ id, items }) => {
  const replies = [];
  for (const { temp, target, tempMode } of items) {
    let st;
    try {
      st = statSync(target, { throwIfNoEntry: false });
    } catch (e) {
      if (!gone(e)) { drop(temp); replies.push({ kind: 'error', op: 'stat', code: e.code, message: String(e.message) }); continue; }
    }
    if (st !== undefined && st.isDirectory()) { drop(temp); replies.push({ kind: 'directory' }); continue; }
    try {
      if (st !== undefined && st.isFile() && (st.mode & 0o7777) !== tempMode) chmodSync(temp, st.mode & 0o7777);
      renameSync(temp, target);
      replies.push({ kind: 'ok' });
    } catch (e) {
      drop(temp);
      if (gone(e)) { replies.push({ kind: 'missing' }); break; }
      if (e.code === 'EISDIR') { replies.push({ kind: 'directory' }); continue; }
      replies.push({ kind: 'error', op: 'rename', code: e.code, message: String(e.message) });
    }
  }
  parentPort.postMessage({ id, replies });
});
`;

interface Pending {
  readonly resolve: (replies: CommitReply[]) => void;
  readonly reject: (err: Error) => void;
}

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function thread(): Worker {
  if (worker !== null) return worker;
  // execArgv: none of the parent's flags (e.g. a TypeScript loader) are needed for this code.
  const w = new Worker(SOURCE, { eval: true, execArgv: [], name: 'file-commit' });
  w.unref(); // referenced only while a batch is in flight (see commitInThread)
  w.on('message', ({ id, replies }: { id: number; replies: CommitReply[] }) => {
    const p = pending.get(id);
    if (p === undefined) return;
    pending.delete(id);
    if (pending.size === 0) w.unref();
    p.resolve(replies);
  });
  w.on('error', (err) => {
    if (worker === w) worker = null;
    failAll(err);
  });
  w.on('exit', (code) => {
    if (worker === w) worker = null;
    failAll(new Error(`the file commit thread exited (code ${code})`));
  });
  worker = w;
  return w;
}

/**
 * Renames `items` in order on the commit thread; one reply per item handled
 * (fewer than the items when it stopped at a 'missing' one, which is last).
 */
export function commitInThread(items: readonly CommitItem[]): Promise<CommitReply[]> {
  if (items.length === 0) return Promise.resolve([]);
  const w = thread();
  const id = nextId++;
  return new Promise<CommitReply[]>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, items });
  });
}

/** Stops the commit thread (tests; a later batch starts a new one). */
export async function stopCommitThread(): Promise<void> {
  const w = worker;
  worker = null;
  if (w !== null) await w.terminate();
}
