/**
 * DuckDB seed load: `BEGIN; [DROP VIEW T;] CREATE OR REPLACE TABLE T
 * (…); <appender>; COMMIT;`. The appender takes each value as text and
 * DuckDB casts it to the column type, so NULL and the empty string stay
 * distinct and text columns are stored unchanged. Parquet uses
 * `CREATE OR REPLACE TABLE T AS SELECT * FROM read_parquet('<abs file>')`.
 *
 * One exception to "DuckDB casts": the appender (1.5) parses timestamptz
 * text but ignores a non-UTC offset (`05:04:05+02:00` is stored as 05:04:05
 * UTC, where a SQL cast gives 03:04:05 UTC), so offsets are applied here
 * before appending. Only the offset is arithmetic; the fraction is kept as
 * written, so no precision is lost.
 */
import { dropSql } from '../dml-sql.js';
import { quoteString } from '../literal.js';
import { seedLoadFailed } from '../materialize-errors.js';
import { quoteIdent, quoteRelation } from '../relation.js';
import type { FlowContext } from '../session-parts.js';
import type { Relation, Rows, SeedOptions, SeedSource, SeedTableData } from '../target.js';
import type { DuckdbDriver } from './driver.js';

const ZONED = /^(-?\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `2024-01-02 05:04:05.5+02:00` → `2024-01-02 03:04:05.5Z`; other text is returned unchanged. */
export function zonedToUtc(value: string): string {
  const m = ZONED.exec(value);
  if (m === null || m[8]!.toUpperCase() === 'Z') return value;
  const zone = m[8]!;
  const digits = zone.slice(1).replace(':', '');
  const offsetMinutes = (zone[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0'));
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]) - offsetMinutes, Number(m[6]), 0);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${m[7] ?? ''}Z`;
}

function appendableRows(table: SeedTableData): readonly (readonly (string | null)[])[] {
  const zoned = table.columns.map((c) => c.type === 'timestamptz');
  if (!zoned.includes(true)) return table.rows;
  return table.rows.map((row) => row.map((v, i) => (v !== null && zoned[i] ? zonedToUtc(v) : v)));
}

export async function loadSeed(ctx: FlowContext<DuckdbDriver>, rel: Relation, source: SeedSource, opts: SeedOptions): Promise<Rows> {
  const T = quoteRelation(rel);
  const { driver } = ctx;
  try {
    const kind = await ctx.introspect.relationKind(driver, rel);
    await driver.query('BEGIN');
    if (kind === 'view') await driver.query(dropSql('view', rel, opts.dropCascade, false));
    let rows: number;
    if (source.kind === 'parquet') {
      rows = (await driver.query(`CREATE OR REPLACE TABLE ${T} AS SELECT * FROM read_parquet(${quoteString(source.file)})`)).count;
    } else {
      const cols = source.table.columns.map((c) => `${quoteIdent(c.name)} ${ctx.dialect.seedColumnType(c.type)}`).join(', ');
      await driver.query(`CREATE OR REPLACE TABLE ${T} (${cols})`);
      rows = await driver.appendText(rel, appendableRows(source.table));
    }
    await driver.query('COMMIT');
    return { rows };
  } catch (err) {
    await driver.cleanup('ROLLBACK');
    throw seedLoadFailed(opts.seedName, rel, err);
  }
}
