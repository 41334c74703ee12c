/**
 * One daemon per data directory (docs/daemon.md, "One daemon per data
 * directory"). The lock is an SQLite database held in an open EXCLUSIVE
 * transaction: the operating system's file lock behind it disappears with
 * the process, so a daemon killed with `kill -9` leaves nothing to clean up
 * and the next start simply takes the lock — no pid-file guessing, no race
 * between two starters deciding that a lock is stale. SQLite also makes two
 * opens inside one process conflict (plain fcntl locks would not).
 *
 * The holder's pid is written beside the lock (`daemon.pid`) only so that a
 * refused daemon can say which process holds the directory.
 *
 * A SQLite state file is locked on its own as well (`<file>.daemon.lock`,
 * holder's pid in `<file>.daemon.pid`), wherever it lives: two data
 * directories must not share one state file, whichever directory's default
 * it is.
 *
 * The locks are taken before the state store is opened and before restart
 * recovery runs: a second daemon must not mark the first one's executions
 * interrupted before it finds out the directory or the file is busy.
 */
import type Database from 'better-sqlite3';
import { openDatabase, pragma } from './sqlite-database.js';
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EngineError } from '../errors.js';

export interface DaemonLock {
  release(): void;
}

const LOCK_FILE = 'daemon.lock';
const PID_FILE = 'daemon.pid';

function holderPid(pidFile: string): string {
  try {
    const pid = readFileSync(pidFile, 'utf8').trim();
    return /^\d+$/.test(pid) ? pid : 'unknown';
  } catch {
    return 'unknown';
  }
}

function lockOne(lockFile: string, what: string, pidFile: string): Database.Database {
  mkdirSync(dirname(lockFile), { recursive: true });
  const db = openDatabase(lockFile, { timeout: 0 });
  try {
    pragma(db, 'journal_mode = MEMORY'); // no journal file beside the lock
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY' || (err as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new EngineError('node', `${what} is in use by another daemon (pid ${holderPid(pidFile)})`);
    }
    throw new EngineError('node', `cannot lock ${what}`, err);
  }
}

/** The state file's path with symbolic links resolved (the file itself may not exist yet). */
function canonical(file: string): string {
  const abs = resolve(file);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return join(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
}

function writePid(pidFile: string): void {
  const tmp = `${pidFile}.${process.pid}`;
  writeFileSync(tmp, `${process.pid}\n`);
  renameSync(tmp, pidFile);
}

/**
 * Locks `dataDir` and the SQLite state file `sqliteState` (by its own lock,
 * wherever it lives: two daemons with different data directories must not
 * share one SQLite state file either). Fails with
 * `data directory <abs> is in use by another daemon (pid <n>)` or
 * `state file <abs> is in use by another daemon (pid <n>)`.
 */
export function lockDataDir(dataDir: string, sqliteState?: string): DaemonLock {
  const dir = resolve(dataDir);
  const pidFiles = [join(dir, PID_FILE)];
  const held: Database.Database[] = [lockOne(join(dir, LOCK_FILE), `data directory ${dir}`, pidFiles[0]!)];
  try {
    if (sqliteState !== undefined && sqliteState !== ':memory:') {
      const state = canonical(sqliteState);
      pidFiles.push(`${state}.${PID_FILE}`);
      held.push(lockOne(`${state}.${LOCK_FILE}`, `state file ${state}`, pidFiles[1]!));
    }
  } catch (err) {
    for (const db of held) db.close();
    throw err;
  }
  for (const f of pidFiles) writePid(f);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      for (const db of held) db.close();
    },
  };
}
