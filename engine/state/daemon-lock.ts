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
 * The lock is taken before the state store is opened and before restart
 * recovery runs: a second daemon must not mark the first one's executions
 * interrupted before it finds out the directory is busy.
 */
import type Database from 'better-sqlite3';
import { openDatabase, pragma } from './sqlite-database.js';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EngineError } from '../errors.js';

export interface DaemonLock {
  release(): void;
}

const LOCK_FILE = 'daemon.lock';
const PID_FILE = 'daemon.pid';

function holderPid(dir: string): string {
  try {
    const pid = readFileSync(join(dir, PID_FILE), 'utf8').trim();
    return /^\d+$/.test(pid) ? pid : 'unknown';
  } catch {
    return 'unknown';
  }
}

function lockOne(lockFile: string, what: string, pidDir: string): Database.Database {
  mkdirSync(dirname(lockFile), { recursive: true });
  const db = openDatabase(lockFile, { timeout: 0 });
  try {
    pragma(db, 'journal_mode = MEMORY'); // no journal file beside the lock
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY' || (err as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new EngineError('node', `${what} is in use by another daemon (pid ${holderPid(pidDir)})`);
    }
    throw new EngineError('node', `cannot lock ${what}`, err);
  }
}

/**
 * Locks `dataDir` and, when the SQLite state file lives elsewhere, that file
 * too (two daemons with different data directories must not share one
 * SQLite state file either). Fails with
 * `data directory <abs> is in use by another daemon (pid <n>)`.
 */
export function lockDataDir(dataDir: string, sqliteState?: string): DaemonLock {
  const dir = resolve(dataDir);
  const held: Database.Database[] = [lockOne(join(dir, LOCK_FILE), `data directory ${dir}`, dir)];
  try {
    if (sqliteState !== undefined) {
      const state = resolve(sqliteState);
      if (dirname(state) !== dir) held.push(lockOne(`${state}.${LOCK_FILE}`, `state file ${state}`, dir));
    }
  } catch (err) {
    for (const db of held) db.close();
    throw err;
  }
  const tmp = join(dir, `${PID_FILE}.${process.pid}`);
  writeFileSync(tmp, `${process.pid}\n`);
  renameSync(tmp, join(dir, PID_FILE));
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      for (const db of held) db.close();
    },
  };
}
