/**
 * The file writer's thread (file-writer.ts says why a thread, and what a
 * stage and a commit do): one task per batch, answered with one reply per
 * item. Stage items write and fsync their temporaries together; commit
 * items are renamed in order, the batch stopping at the first whose
 * temporary or directory has gone.
 */
import fs from 'node:fs';

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

export type StageReply =
  | { readonly kind: 'staged'; readonly mode: number; readonly size: number; readonly mtimeMs: number }
  | { readonly kind: 'error'; readonly code?: string; readonly message: string };

export type WriterTask = { readonly op: 'stage'; readonly items: readonly { readonly temp: string; readonly data: Uint8Array }[] } | { readonly op: 'commit'; readonly items: readonly CommitItem[] };

type FsError = NodeJS.ErrnoException;

const gone = (e: FsError) => e.code === 'ENOENT' || e.code === 'ENOTDIR';
const failed = (e: FsError) => ({ kind: 'error' as const, ...(e.code !== undefined ? { code: e.code } : {}), message: String(e.message) });

function drop(temp: string): void {
  try {
    fs.rmSync(temp, { force: true });
  } catch {
    // best effort: the temporary's name marks it as ours
  }
}

function close(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // the file was written and synced, or its error is reported already
  }
}

/** fsync in libuv's threadpool, so the batch's fsyncs run at once. */
const fsync = (fd: number) => new Promise<FsError | null>((resolve) => fs.fsync(fd, (e) => resolve(e)));

/** The temporary's descriptor, written in full; or the error (nothing left behind). */
function write(temp: string, data: Uint8Array): number | FsError {
  let fd: number | undefined;
  try {
    fd = fs.openSync(temp, 'wx', 0o666);
    for (let w = 0; w < data.byteLength; ) w += fs.writeSync(fd, data, w, data.byteLength - w, w);
    return fd;
  } catch (e) {
    if (fd !== undefined) {
      close(fd);
      drop(temp);
    }
    return e as FsError;
  }
}

async function stage(items: Extract<WriterTask, { op: 'stage' }>['items']): Promise<StageReply[]> {
  const fds = items.map(({ temp, data }) => write(temp, data));
  const synced = await Promise.all(fds.map((fd) => (typeof fd === 'number' ? fsync(fd) : null)));
  return fds.map((fd, k): StageReply => {
    if (typeof fd !== 'number') return failed(fd);
    try {
      if (synced[k]) throw synced[k];
      const st = fs.fstatSync(fd);
      return { kind: 'staged', mode: st.mode, size: st.size, mtimeMs: st.mtimeMs };
    } catch (e) {
      drop(items[k]!.temp);
      return failed(e as FsError);
    } finally {
      close(fd);
    }
  });
}

function commit(items: readonly CommitItem[]): CommitReply[] {
  const replies: CommitReply[] = [];
  for (const { temp, target, tempMode } of items) {
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(target, { throwIfNoEntry: false });
    } catch (e) {
      if (!gone(e as FsError)) {
        drop(temp);
        replies.push({ op: 'stat', ...failed(e as FsError) });
        continue;
      }
    }
    if (st !== undefined && st.isDirectory()) {
      drop(temp);
      replies.push({ kind: 'directory' });
      continue;
    }
    try {
      if (st !== undefined && st.isFile() && (st.mode & 0o7777) !== tempMode) fs.chmodSync(temp, st.mode & 0o7777);
      fs.renameSync(temp, target);
      replies.push({ kind: 'ok' });
    } catch (e) {
      drop(temp);
      const err = e as FsError;
      if (gone(err)) {
        replies.push({ kind: 'missing' });
        break;
      }
      if (err.code === 'EISDIR') {
        replies.push({ kind: 'directory' });
        continue;
      }
      replies.push({ op: 'rename', ...failed(err) });
    }
  }
  return replies;
}

export default function runWriterTask(task: WriterTask): Promise<StageReply[]> | CommitReply[] {
  return task.op === 'commit' ? commit(task.items) : stage(task.items);
}
