/**
 * Opens a better-sqlite3 database, keeping its objects alive on Node 24.
 *
 * From Node 24 the addon's native objects (built against Node 24's
 * node_object_wrap.h) remove an environment cleanup hook when they are
 * destroyed, and Node aborts the process (`Assertion failed: (env) !=
 * nullptr`, SIGABRT) when that happens inside a garbage collection that runs
 * with no JavaScript context — an idle GC, or one at shutdown. better-sqlite3
 * 12 is affected (13 is not, but needs Node 22, and this package supports
 * Node 20). A Database or Statement that is never garbage collected is never
 * destroyed from a GC, so on Node 24 and later every one this process
 * creates is kept until it exits: a few hundred small objects for a daemon
 * (statements are cached per store). better-sqlite3's own `pragma()` makes a
 * statement this cannot keep, hence `pragma()` below. Measured on Node 24.21:
 * 200 databases of 50 statements each, then an allocation burst, abort
 * without this and exit 0 with it; the state-store test file aborted at its
 * end before.
 */
import Database from 'better-sqlite3';

const KEEP = Number(process.versions.node.split('.')[0]) >= 24;
const kept: unknown[] = [];
let patched = false;

function keepStatements(): void {
  if (patched) return;
  patched = true;
  // pragma() and transaction() prepare statements of their own through this method.
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function keptPrepare(this: Database.Database, ...args: Parameters<typeof prepare>) {
    const statement = prepare.apply(this, args);
    kept.push(statement);
    return statement;
  } as typeof prepare;
}

/** `PRAGMA <text>` through a statement that is kept (better-sqlite3's `db.pragma()` makes one that is not). */
export function pragma(db: Database.Database, text: string): unknown {
  const statement = db.prepare(`PRAGMA ${text}`);
  return statement.reader ? statement.get() : statement.run();
}

export function openDatabase(path: string, options?: Database.Options): Database.Database {
  if (KEEP) keepStatements();
  const db = new Database(path, options);
  if (KEEP) kept.push(db);
  return db;
}
