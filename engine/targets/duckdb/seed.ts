/**
 * DuckDB seed load (§11.5): `BEGIN; [DROP VIEW T;] CREATE OR REPLACE TABLE T
 * (…); <appender>; COMMIT;`. The appender takes each value as text and
 * DuckDB casts it to the column type, so NULL and the empty string stay
 * distinct and text columns are stored unchanged. Parquet uses
 * `CREATE OR REPLACE TABLE T AS SELECT * FROM read_parquet('<abs file>')`.
 */
import { dropSql } from '../dml-sql.js';
import { quoteString } from '../literal.js';
import { seedLoadFailed } from '../materialize-errors.js';
import { quoteIdent, quoteRelation } from '../relation.js';
import type { FlowContext } from '../session-parts.js';
import type { Relation, Rows, SeedOptions, SeedSource } from '../target.js';
import type { DuckdbDriver } from './driver.js';

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
      rows = await driver.appendText(rel, source.table.rows);
    }
    await driver.query('COMMIT');
    return { rows };
  } catch (err) {
    await driver.cleanup('ROLLBACK');
    throw seedLoadFailed(opts.seedName, rel, err);
  }
}
