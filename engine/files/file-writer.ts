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
 *
 * The thread is a Piscina pool of one (engine/threads/module-pool.ts)
 * running file-writer-thread.ts; its batches run concurrently there, so a
 * commit does not wait for a stage's fsyncs.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Piscina } from 'piscina';
import { modulePool } from '../threads/module-pool.js';
import { tempPath, type StagedFile } from './atomic-write.js';
import type { CommitItem, CommitReply, StageReply, WriterTask } from './file-writer-thread.js';

export type { CommitItem, CommitReply } from './file-writer-thread.js';

/** Batches one thread runs at once (stages wait on their fsyncs). */
const CONCURRENT_BATCHES = 64;

let pool: Piscina<WriterTask, unknown[]> | null = null;

function request<R>(task: WriterTask): Promise<R[]> {
  pool ??= modulePool<WriterTask, unknown[]>(import.meta.url, './file-writer-thread.js', { maxThreads: 1, concurrentTasksPerWorker: CONCURRENT_BATCHES });
  return pool.run(task) as Promise<R[]>;
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
  request<StageReply>({ op: 'stage', items: batch.map(({ temp, data }) => ({ temp, data })) }).then(
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
  return request<CommitReply>({ op: 'commit', items });
}

/** Stops the writer thread (tests; a later batch starts a new one). */
export async function stopFileWriter(): Promise<void> {
  const p = pool;
  pool = null;
  if (p !== null) await p.destroy();
}
