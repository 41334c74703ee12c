/**
 * Incremental watermarks (build.md §8.6): one row per (target connection,
 * model full name) holding the literal text of the last loaded bound and
 * when it was written. `SERVICE_STATE` names the store: a SQLite file path
 * (created on first use, WAL) or a `postgres://` / `postgresql://` URL.
 * Stores are opened once per thread and kept for the process.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EngineError } from '../errors.js';

export interface Watermark {
  readonly value: string;
  readonly updatedAt: string;
}

export interface WatermarkStore {
  get(target: string, model: string): Promise<Watermark | undefined>;
  set(target: string, model: string, value: string): Promise<void>;
}

const TABLE = 'service_build_watermarks';
const DDL = `CREATE TABLE IF NOT EXISTS ${TABLE} (target TEXT NOT NULL, model TEXT NOT NULL, value TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (target, model))`;

function sqliteStore(file: string): WatermarkStore {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(DDL);
  const get = db.prepare(`SELECT value, updated_at FROM ${TABLE} WHERE target = ? AND model = ?`);
  const put = db.prepare(`INSERT INTO ${TABLE} (target, model, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (target, model) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`);
  return {
    async get(target, model) {
      const row = get.get(target, model) as { value: string; updated_at: string } | undefined;
      return row ? { value: row.value, updatedAt: row.updated_at } : undefined;
    },
    async set(target, model, value) {
      put.run(target, model, value, new Date().toISOString());
    },
  };
}

function postgresStore(url: string): WatermarkStore {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {});
  let ready: Promise<unknown> | undefined;
  const init = () => (ready ??= pool.query(DDL));
  return {
    async get(target, model) {
      await init();
      const r = await pool.query(`SELECT value, updated_at FROM ${TABLE} WHERE target = $1 AND model = $2`, [target, model]);
      return r.rows[0] ? { value: r.rows[0].value as string, updatedAt: r.rows[0].updated_at as string } : undefined;
    },
    async set(target, model, value) {
      await init();
      await pool.query(
        `INSERT INTO ${TABLE} (target, model, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (target, model) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        [target, model, value, new Date().toISOString()],
      );
    },
  };
}

const stores = new Map<string, WatermarkStore>();

/** The store `SERVICE_STATE` names; `unsupported SERVICE_STATE location '<v>'` for other forms. */
export function watermarkStore(location: string): WatermarkStore {
  let s = stores.get(location);
  if (s) return s;
  if (/^postgres(ql)?:\/\//.test(location)) s = postgresStore(location);
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) || location.trim() === '') throw new EngineError('node', `unsupported SERVICE_STATE location '${location}'`);
  else s = sqliteStore(location);
  stores.set(location, s);
  return s;
}
