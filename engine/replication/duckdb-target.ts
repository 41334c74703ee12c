/**
 * DuckDB as a replication target. PostgreSQL text COPY is parsed and fed to
 * the appender (its VARCHAR → column casts do the typing; bytea arrives as
 * hex and intervals as ISO 8601, which the appender cannot cast); SQL feeds
 * (same-file DuckDB sources, files read by this DuckDB) become one
 * `INSERT … SELECT`. The appender fills every column of a table in order, so
 * a load into an existing table with other columns stages through a fresh
 * table first.
 */
import { DuckDBDecimalValue, DuckDBIntervalValue, type DuckDBAppender } from '@duckdb/node-api';
import { EngineError } from '../errors.js';
import { quoteIdent, quoteRelation, tempRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import type { SourceColumn } from './column-types.js';
import { copyTextRows, parseIsoInterval } from './copy-text.js';
import type { DuckSession } from './duck-session.js';
import type { Feed, LoadCount } from './feed.js';
import { progressLog, type Progress } from './progress.js';
import type { LoadColumn, TableTarget, TargetTable } from './table-load.js';

type Append = (a: DuckDBAppender, value: string) => void;

const appendText: Append = (a, v) => a.appendVarchar(v);
const appendHex: Append = (a, v) => a.appendBlob(Buffer.from(v, 'hex'));
const appendInterval: Append = (a, v) => {
  const i = parseIsoInterval(v);
  a.appendInterval(new DuckDBIntervalValue(i.months, i.days, i.micros));
};

/**
 * DECIMAL wider than 18 digits is a HUGEINT inside DuckDB, and its VARCHAR
 * cast is slow (≈10 µs a value against ≈0.5 µs for DECIMAL(18,s), measured
 * with DuckDB 1.5), so such values are scaled to a BigInt here and appended
 * as decimals (≈4.5 µs); text with more fraction digits than the scale
 * takes the cast, which rounds.
 */
function wideDecimal(width: number, scale: number): Append {
  return (a, v) => {
    const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(v);
    const frac = m?.[3] ?? '';
    if (m === null || frac.length > scale) {
      a.appendVarchar(v);
      return;
    }
    const digits = BigInt(m[2]! + frac.padEnd(scale, '0'));
    a.appendDecimal(new DuckDBDecimalValue(m[1] === '-' ? -digits : digits, width, scale));
  };
}

function appenderFor(col: SourceColumn, ddl: string): Append {
  if (col.kind === 'blob') return appendHex;
  if (col.kind === 'interval') return appendInterval;
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(ddl);
  if (decimal && Number(decimal[1]) > 18) return wideDecimal(Number(decimal[1]), Number(decimal[2]));
  return appendText;
}

/** Appends PostgreSQL COPY text rows into `rel`, whose columns (`columns`, in order) match the feed's. */
async function appendCopyText(s: DuckSession, rel: Relation, columns: readonly LoadColumn[], feed: Extract<Feed, { kind: 'pg-text' }>, progress: Progress): Promise<LoadCount> {
  const appends = feed.columns.map((c, i) => appenderFor(c, columns[i]?.ddl ?? ''));
  const width = appends.length;
  let bytes = 0;
  let rows = 0;
  const stream = feed.open();
  const counted = (async function* () {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      yield chunk;
    }
  })();
  let appender: DuckDBAppender;
  try {
    appender = await s.conn.createAppender(rel.name, rel.schema, rel.database ?? null);
  } catch (err) {
    stream.destroy();
    throw s.translate(err);
  }
  try {
    for await (const batch of copyTextRows(counted)) {
      s.check();
      for (const row of batch) {
        if (row.length !== width) throw new EngineError('node', `COPY row has ${row.length} fields, expected ${width}`);
        for (let i = 0; i < width; i++) {
          const v = row[i];
          if (v === null) appender.appendNull();
          else appends[i]!(appender, v);
        }
        appender.endRow();
      }
      rows += batch.length;
      progress(rows, bytes);
    }
    appender.flushSync();
  } catch (err) {
    stream.destroy();
    throw s.translate(err);
  } finally {
    try {
      appender.closeSync();
    } catch {
      // A failed load leaves rows in the appender; the transaction or temp table is discarded anyway.
    }
  }
  return { rows, bytes };
}

const DESCRIBE_SQL = (rel: Relation) => `SELECT t.table_type, c.column_name, c.data_type
  FROM information_schema.tables t
  LEFT JOIN information_schema.columns c
    ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema AND c.table_name = t.table_name
  WHERE t.table_catalog = current_database() AND t.table_schema = '${rel.schema.replace(/'/g, "''")}' AND t.table_name = '${rel.name.replace(/'/g, "''")}'
  ORDER BY c.ordinal_position`;

export function duckTableTarget(s: DuckSession, runId: string, log: (line: string) => void): TableTarget {
  const target: TableTarget = {
    dialect: 'duckdb',
    async exec(sql) {
      await s.run(sql);
    },
    cleanup: (sql) => s.cleanup(sql),
    async describe(rel): Promise<TargetTable | null> {
      const rows = await s.rows(DESCRIBE_SQL(rel));
      if (rows.length === 0) return null;
      const kind = String(rows[0]![0]) === 'VIEW' ? 'view' : 'table';
      return { kind, columns: rows.filter((r) => r[1] !== null).map((r) => ({ name: String(r[1]), type: String(r[2]) })) };
    },
    async maxText(rel, column) {
      const rows = await s.rows(`SELECT CAST(max(${quoteIdent(column)}) AS VARCHAR) FROM ${quoteRelation(rel)}`);
      const v = rows[0]?.[0];
      return v === null || v === undefined ? null : String(v);
    },
    staging: (rel, id) => ({ rel: tempRelation(rel, `${id}s`), create: 'CREATE TABLE' }),
    truncateSql: (rel) => `DELETE FROM ${quoteRelation(rel)}`,
    async load(rel: Relation, columns: readonly LoadColumn[], feed: Feed, exact: boolean): Promise<LoadCount> {
      const list = columns.map((c) => quoteIdent(c.name)).join(', ');
      if (feed.kind === 'duckdb-sql') {
        const rows = await s.run(`INSERT INTO ${quoteRelation(rel)} (${list}) SELECT * FROM (\n${feed.sql}\n) AS _s`);
        return { rows, bytes: 0 };
      }
      if (feed.kind !== 'pg-text') throw new EngineError('internal', 'a DuckDB target takes PostgreSQL COPY text or DuckDB SQL');
      if (exact) return appendCopyText(s, rel, columns, feed, progressLog(log));
      const stage = tempRelation(rel, `${runId}a`);
      await s.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(stage)}`);
      try {
        await s.run(`CREATE TABLE ${quoteRelation(stage)} (${columns.map((c) => `${quoteIdent(c.name)} ${c.ddl}`).join(', ')})`);
        const count = await appendCopyText(s, stage, columns, feed, progressLog(log));
        await s.run(`INSERT INTO ${quoteRelation(rel)} (${list}) SELECT ${list} FROM ${quoteRelation(stage)}`);
        return count;
      } finally {
        await s.cleanup(`DROP TABLE IF EXISTS ${quoteRelation(stage)}`);
      }
    },
  };
  return target;
}
