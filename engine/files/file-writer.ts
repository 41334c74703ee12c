/**
 * One dedicated thread for the durable writes of saves (see
 * ProjectTree.stage and ProjectTree.commitBatch), fed batches:
 *
 * - stage: the saves that arrived during one turn of the event loop, in one
 *   message. The thread writes each one's temporary file beside its target,
 *   fsyncs them all at once (concurrent fsyncs share the file system's
 *   journal commits; they run in libuv's threadpool, dispatched from this
 *   thread) and answers each with its temporary's stat.
 * - commit: for a caller holding the project lock, the renames of a group
 *   of staged saves, in order. For each item: stat the target (a directory
 *   there is a conflict), give the temporary the target's permission bits
 *   when they differ, rename. A failed item's temporary is removed. The
 *   batch stops at the first item whose temporary or directory has gone (a
 *   delete or pull came first): the caller writes that one afresh, in order,
 *   before sending the rest.
 *
 * Why a thread: staging a save on the main thread took five trips through
 * libuv's threadpool (open, write, fsync, fstat, close), each waking another
 * thread that, on 2 cores, took the CPU from the thread serving requests;
 * and on ext4 a rename waits for the journal while other writers fsync,
 * which on the main thread stalls every request and in the threadpool
 * queues behind those very fsyncs. Here the main thread posts one message
 * per batch. The thread holds no lock; the directory fsync that makes the
 * renames durable is the caller's (atomic-write.ts syncDirectory).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { tempPath, type StagedFile } from './atomic-write.js';

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

type StageReply =
  | { readonly kind: 'staged'; readonly mode: number; readonly size: number; readonly mtimeMs: number }
  | { readonly kind: 'error'; readonly code?: string; readonly message: string };

// Plain CommonJS run with `eval`, so the same code serves the compiled build and tsx test runs.
const SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const gone = (e) => e && (e.code === 'ENOENT' || e.code === 'ENOTDIR');
const drop = (temp) => { try { fs.rmSync(temp, { force: true }); } catch {} };
const close = (fd) => { try { fs.closeSync(fd); } catch {} };
const failed = (e) => ({ kind: 'error', code: e.code, message: String(e.message) });
const fsync = (fd) => new Promise((resolve) => fs.fsync(fd, (e) => resolve(e)));
async function stage(items) {
  const fds = items.map(({ temp, data }) => {
    let fd;
    try {
      fd = fs.openSync(temp, 'wx', 0o666);
      for (let w = 0; w < data.byteLength; ) w += fs.writeSync(fd, data, w, data.byteLength - w, w);
      return fd;
    } catch (e) {
      if (fd !== undefined) { close(fd); drop(temp); }
      return e;
    }
  });
  const synced = await Promise.all(fds.map((fd) => (typeof fd === 'number' ? fsync(fd) : fd)));
  return fds.map((fd, k) => {
    if (typeof fd !== 'number') return failed(fd);
    try {
      if (synced[k]) throw synced[k];
      const st = fs.fstatSync(fd);
      return { kind: 'staged', mode: st.mode, size: st.size, mtimeMs: st.mtimeMs };
    } catch (e) {
      drop(items[k].temp);
      return failed(e);
    } finally {
      close(fd);
    }
  });
}
function commit(items) {
  const replies = [];
  for (const { temp, target, tempMode } of items) {
    let st;
    try {
      st = fs.statSync(target, { throwIfNoEntry: false });
    } catch (e) {
      if (!gone(e)) { drop(temp); replies.push({ op: 'stat', ...failed(e) }); continue; }
    }
    if (st !== undefined && st.isDirectory()) { drop(temp); replies.push({ kind: 'directory' }); continue; }
    try {
      if (st !== undefined && st.isFile() && (st.mode & 0o7777) !== tempMode) fs.chmodSync(temp, st.mode & 0o7777);
      fs.renameSync(temp, target);
      replies.push({ kind: 'ok' });
    } catch (e) {
      drop(temp);
      if (gone(e)) { replies.push({ kind: 'missing' }); break; }
      if (e.code === 'EISDIR') { replies.push({ kind: 'directory' }); continue; }
      replies.push({ op: 'rename', ...failed(e) });
    }
  }
  return replies;
}
parentPort.on('message', ({ id, op, items }) => {
  if (op === 'commit') parentPort.postMessage({ id, replies: commit(items) });
  else stage(items).then((replies) => parentPort.postMessage({ id, replies }));
});
`;

interface Pending {
  readonly resolve: (replies: unknown[]) => void;
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
  const w = new Worker(SOURCE, { eval: true, execArgv: [], name: 'file-writer' });
  w.unref(); // referenced only while a batch is in flight (see request)
  w.on('message', ({ id, replies }: { id: number; replies: unknown[] }) => {
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
    failAll(new Error(`the file writer thread exited (code ${code})`));
  });
  worker = w;
  return w;
}

function request<R>(op: 'stage' | 'commit', items: readonly unknown[]): Promise<R[]> {
  const w = thread();
  const id = nextId++;
  return new Promise<unknown[]>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, op, items });
  }) as Promise<R[]>;
}

interface QueuedStage {
  readonly target: string;
  readonly temp: string;
  readonly data: Uint8Array;
  readonly resolve: (staged: StagedFile) => void;
  readonly reject: (err: Error) => void;
}

/** Stages requested during this turn of the event loop, sent together at its end. */
let stages: QueuedStage[] = [];

function sendStages(): void {
  const batch = stages;
  stages = [];
  request<StageReply>('stage', batch.map(({ temp, data }) => ({ temp, data }))).then(
    (replies) =>
      batch.forEach((s, k) => {
        const r = replies[k];
        if (r?.kind === 'staged') s.resolve({ target: s.target, temp: s.temp, stats: { mode: r.mode, size: r.size, mtime: new Date(r.mtimeMs) } });
        else s.reject(Object.assign(new Error(`cannot write ${s.temp}: ${r?.message ?? 'no answer from the file writer thread'}`), { code: r?.code }));
      }),
    (err: Error) => {
      // Nothing is known of this batch: every stage fails, its temporary removed.
      for (const s of batch) void rm(s.temp, { force: true }).finally(() => s.reject(err));
    },
  );
}

/**
 * stageFile on the writer thread: writes `data` to a new temporary file in
 * `target`'s directory (which must exist) and fsyncs it. The stages asked
 * for during one turn of the event loop cross to the thread in one message
 * and are fsync'ed together.
 */
export function stageInThread(target: string, data: Uint8Array): Promise<StagedFile> {
  return new Promise<StagedFile>((resolve, reject) => {
    if (stages.length === 0) setImmediate(sendStages);
    stages.push({ target, temp: tempPath(path.dirname(target)), data, resolve, reject });
  });
}

/**
 * Renames `items` in order on the writer thread; one reply per item handled
 * (fewer than the items when it stopped at a 'missing' one, which is last).
 */
export function commitInThread(items: readonly CommitItem[]): Promise<CommitReply[]> {
  if (items.length === 0) return Promise.resolve([]);
  return request<CommitReply>('commit', items);
}

/** Stops the writer thread (tests; a later batch starts a new one). */
export async function stopFileWriter(): Promise<void> {
  const w = worker;
  worker = null;
  if (w !== null) await w.terminate();
}
