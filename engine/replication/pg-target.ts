/**
 * PostgreSQL as a replication target: rows arrive through `COPY … FROM
 * STDIN` (text from a PostgreSQL source, CSV from DuckDB and file sources),
 * cut into statements of at most `batch_limit` rows (row-batches.ts),
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
import { DEFAULT_BATCH_LIMIT, RowBatches } from './row-batches.js';
import type { LoadColumn, TableTarget, TargetTable } from './table-load.js';

const DESCRIBE_SQL = `SELECT c.relkind, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE n.nspname = $1 AND c.relname = $2 ORDER BY a.attnum`;

/** Passes bytes through, counts them and reports progress. */
export function byteCounter(progress: Progress, start = 0): { stream: Transform; bytes: () => number } {
  let n = start;
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
    async load(rel: Relation, columns: readonly LoadColumn[], feed: Feed, batchLimit: number | undefined): Promise<LoadCount> {
      if (feed.kind !== 'pg-text' && feed.kind !== 'csv') throw new EngineError('internal', 'a PostgreSQL target cannot run DuckDB SQL');
      const target = `${quoteRelation(rel)} (${columns.map((c) => quoteIdent(c.name)).join(', ')})`;
      const copy = feed.kind === 'csv' ? `COPY ${target} FROM STDIN WITH (FORMAT csv)` : `COPY ${target} FROM STDIN`;
      const limit = batchLimit ?? DEFAULT_BATCH_LIMIT;
      const progress = progressLog(log);
      const batches = new RowBatches(feed.open(), limit, feed.kind === 'csv');
      let rows = 0;
      let bytes = 0;
      try {
        while (await batches.more()) {
          const counter = byteCounter(progress, bytes);
          rows += await s.copyIn(copy, batches.batch(), counter.stream);
          bytes = counter.bytes();
        }
      } catch (err) {
        await batches.close();
        throw err;
      }
      if (batches.count > 1) log(`loaded ${rows} rows in ${batches.count} COPY statements of at most ${limit} rows (batch_limit)`);
      return { rows, bytes };
    },
    async staged(rel) {
      await s.query(`ANALYZE ${quoteRelation(rel)}`);
    },
  };
}
