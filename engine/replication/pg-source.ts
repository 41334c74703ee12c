/**
 * PostgreSQL as a replication source: columns described from a `LIMIT 0`
 * run of the stream's query (type names through `format_type`), rows read
 * with `COPY (SELECT …) TO STDOUT` — text format for PostgreSQL targets,
 * binary for DuckDB targets (decoded in pg-copy-reader.ts) — the bulk path
 * out.
 */
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import { decimalFromProbe, needsDecimalProbe, pgColumn, type Dialect, type SourceColumn } from './column-types.js';
import type { Feed } from './feed.js';
import type { PgSession } from './pg-session.js';
import type { SourceRead, StreamPlan } from './plan-types.js';
import { buildSourceQuery, loadedAtColumn, selectColumns } from './source-query.js';
import type { FeedRequest, PreparedSource } from './table-load.js';

/** A custom query as a FROM item: trailing semicolons would end the statement early. */
export function sqlFrom(sql: string): string {
  return `(\n${sql.trim().replace(/;+\s*$/, '')}\n) AS "_q"`;
}

export function pgFrom(read: SourceRead): string {
  if (read.kind === 'table') return quoteRelation({ schema: read.schema, name: read.table });
  if (read.kind === 'sql') return sqlFrom(read.sql);
  throw new Error('files are not a PostgreSQL source');
}

async function describe(s: PgSession, from: string): Promise<SourceColumn[]> {
  const r = await s.query(`SELECT * FROM ${from} LIMIT 0`);
  if (r.fields.length === 0) return [];
  const oids = r.fields.map((f) => f.dataTypeID);
  const mods = r.fields.map((f) => f.dataTypeModifier);
  const types = await s.query<{ i: number; t: string; builtin: boolean }>(
    `SELECT x.i, format_type(x.oid, x.mod) AS t, (n.nspname = 'pg_catalog') AS builtin
       FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS x(oid, mod, i)
       JOIN pg_type t ON t.oid = x.oid JOIN pg_namespace n ON n.oid = t.typnamespace
       ORDER BY x.i`,
    [oids, mods],
  );
  return r.fields.map((f, i) => {
    const t = types.rows[i]!;
    return pgColumn(f.name, t.t, t.builtin);
  });
}

export async function preparePgSource(s: PgSession, plan: StreamPlan, target: Dialect): Promise<PreparedSource> {
  const from = pgFrom(plan.read!);
  const columns = selectColumns(await describe(s, from), plan.select, plan.streamName);
  const where = plan.where;
  const limit = plan.sourceOptions.limit;
  return {
    dialect: 'postgres',
    columns,
    feed(req: FeedRequest): Feed {
      // FeedRequest's fields are the query's own; undefined ones add nothing.
      const query = buildSourceQuery({ ...req, source: 'postgres', target, from, where, limit });
      if (target === 'postgres') return { kind: 'pg-text', open: () => s.copyOut(`COPY (${query}) TO STDOUT`) };
      const cols = req.loadedAt !== undefined ? [...req.columns, loadedAtColumn('postgres')] : req.columns;
      return { kind: 'pg-binary', columns: cols, open: () => s.copyOutBinary(`COPY (${query}) TO STDOUT WITH (FORMAT binary)`) };
    },
    async concrete(cols, targetDialect) {
      const probe = targetDialect === 'postgres' ? [] : cols.filter(needsDecimalProbe);
      if (probe.length === 0) return [...cols];
      const exprs = probe.map((c, i) => {
        const q = quoteIdent(c.name);
        return `max(length(trunc(abs(${q}))::text)) AS d${i}, max(scale(${q})) AS s${i}`;
      });
      const filter = where !== undefined ? ` WHERE (${where})` : '';
      const r = await s.query<Record<string, number | null>>(`SELECT ${exprs.join(', ')} FROM ${from}${filter}`);
      const row = r.rows[0] ?? {};
      return cols.map((c) => {
        const i = probe.indexOf(c);
        return i < 0 ? c : decimalFromProbe(c, row[`d${i}`] ?? null, row[`s${i}`] ?? null);
      });
    },
  };
}
