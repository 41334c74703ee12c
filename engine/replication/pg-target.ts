/**
 * PostgreSQL as a replication target: rows arrive through `COPY … FROM
 * STDIN` (text from a PostgreSQL source, CSV from DuckDB and file sources),
 * merges stage into a session temp table, and the session's UTC time zone
 * makes `MAX(update_key)` text unambiguous.
 */
import { Transform } from 'node:stream';
import { EngineError } from '../errors.js';
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import type { Feed, LoadCount } from './feed.js';
import type { PgSession } from './pg-session.js';
import { progressLog, type Progress } from './progress.js';
import type { LoadColumn, TableTarget, TargetTable } from './table-load.js';

const DESCRIBE_SQL = `SELECT c.relkind, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE n.nspname = $1 AND c.relname = $2 ORDER BY a.attnum`;

/** Passes bytes through, counts them and reports progress. */
export function byteCounter(progress: Progress): { stream: Transform; bytes: () => number } {
  let n = 0;
  const stream = new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      n += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      progress(null, n);
      done(null, chunk);
    },
  });
  return { stream, bytes: () => n };
}

export function pgTableTarget(s: PgSession, log: (line: string) => void): TableTarget {
  return {
    dialect: 'postgres',
    async exec(sql) {
      await s.query(sql);
    },
    cleanup: (sql) => s.cleanup(sql),
    async describe(rel): Promise<TargetTable | null> {
      const r = await s.query<{ relkind: string; attname: string | null; type: string | null }>(DESCRIBE_SQL, [rel.schema, rel.name]);
      if (r.rows.length === 0) return null;
      const kind = r.rows[0]!.relkind === 'v' || r.rows[0]!.relkind === 'm' ? 'view' : 'table';
      return { kind, columns: r.rows.filter((x) => x.attname !== null).map((x) => ({ name: x.attname!, type: x.type! })) };
    },
    async maxText(rel, column) {
      const r = await s.query<{ m: string | null }>(`SELECT max(${quoteIdent(column)})::text AS m FROM ${quoteRelation(rel)}`);
      return r.rows[0]?.m ?? null;
    },
    staging(rel, runId) {
      const safe = rel.name.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 30);
      return { rel: { schema: 'pg_temp', name: `_service_stg_${safe}_${runId}` }, create: 'CREATE TEMP TABLE' };
    },
    truncateSql: (rel) => `TRUNCATE TABLE ${quoteRelation(rel)}`,
    async load(rel: Relation, columns: readonly LoadColumn[], feed: Feed): Promise<LoadCount> {
      const target = `${quoteRelation(rel)} (${columns.map((c) => quoteIdent(c.name)).join(', ')})`;
      const counter = byteCounter(progressLog(log));
      if (feed.kind === 'pg-text') {
        const rows = await s.copyIn(`COPY ${target} FROM STDIN`, feed.open(), counter.stream);
        return { rows, bytes: counter.bytes() };
      }
      if (feed.kind === 'csv') {
        const rows = await s.copyIn(`COPY ${target} FROM STDIN WITH (FORMAT csv)`, feed.open(), counter.stream);
        return { rows, bytes: counter.bytes() };
      }
      throw new EngineError('internal', 'a PostgreSQL target cannot run DuckDB SQL');
    },
    async staged(rel) {
      await s.query(`ANALYZE ${quoteRelation(rel)}`);
    },
  };
}
