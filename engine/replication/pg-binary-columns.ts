/**
 * How each PostgreSQL source column travels in binary COPY to DuckDB: the
 * decoder that turns its wire bytes into DuckDB's in-memory layout, the
 * DuckDB type of the column the feed function returns, and the bytes per
 * value in a block (0: variable length, one byte view per value).
 *
 * Fixed-width values are byte-swapped (PostgreSQL sends big-endian) and
 * re-based where the epochs differ: dates and timestamps count from
 * 2000-01-01 on PostgreSQL and 1970-01-01 in DuckDB, with ±infinity mapped
 * to DuckDB's own. Text, json and bytea bytes are passed as they are (jsonb
 * after its version byte). Types without a decoder here are selected as
 * `::text` (`pgBinaryAsText` in source-query.ts) and cast by the INSERT.
 */
import {
  BIGINT, BLOB, BOOLEAN, DATE, DECIMAL, DOUBLE, DuckDBVarCharType, FLOAT, INTEGER, INTERVAL, SMALLINT, TIME, TIMESTAMP, TIMESTAMPTZ, UUID, VARCHAR,
  type DuckDBType,
} from '@duckdb/node-api';
import type { SourceColumn } from './column-types.js';
import { Code, type DecodedColumn } from './pg-copy-reader.js';
import { pgBinaryAsText } from './source-query.js';

/** A decoded column and the DuckDB type of the feed function's column. */
export interface BinaryColumn extends DecodedColumn {
  readonly type: DuckDBType;
}

/** JSON columns skip DuckDB's validation: PostgreSQL only ever sends valid json/jsonb. */
const JSON_TYPE = DuckDBVarCharType.create('JSON');

const fixed = (code: number, type: DuckDBType, width: number, wire = width): BinaryColumn => ({ code, type, width, wire });
const bytes = (code: number, type: DuckDBType): BinaryColumn => ({ code, type, width: 0, wire: -1 });

function decimal(precision: number, scale: number): BinaryColumn {
  const type = DECIMAL(precision, scale);
  // DuckDB stores DECIMAL(p, s) in the smallest integer holding p digits.
  if (precision <= 4) return { code: Code.Decimal16, type, width: 2, wire: -1, precision, scale };
  if (precision <= 9) return { code: Code.Decimal32, type, width: 4, wire: -1, precision, scale };
  if (precision <= 18) return { code: Code.Decimal64, type, width: 8, wire: -1, precision, scale };
  return { code: Code.Decimal128, type, width: 16, wire: -1, precision, scale };
}

/**
 * The binary column for a PostgreSQL source column loaded into a DuckDB
 * column of type `ddl` (numerics take the DECIMAL of the DDL, or travel as
 * text when the DDL is not a DECIMAL).
 */
export function binaryColumn(col: SourceColumn, ddl: string): BinaryColumn {
  if (pgBinaryAsText(col)) return bytes(Code.Bytes, VARCHAR);
  switch (col.kind) {
    case 'smallint': return fixed(Code.Int16, SMALLINT, 2);
    case 'integer': return fixed(Code.Int32, INTEGER, 4);
    case 'bigint': return fixed(Code.Int64, BIGINT, 8);
    case 'real': return fixed(Code.Float32, FLOAT, 4);
    case 'double': return fixed(Code.Float64, DOUBLE, 8);
    case 'boolean': return fixed(Code.Bool, BOOLEAN, 1);
    case 'date': return fixed(Code.Date, DATE, 4);
    case 'time': return fixed(Code.Time, TIME, 8);
    case 'timestamp': return fixed(Code.Timestamp, TIMESTAMP, 8);
    case 'timestamptz': return fixed(Code.Timestamp, TIMESTAMPTZ, 8);
    case 'interval': return fixed(Code.Interval, INTERVAL, 16);
    case 'uuid': return fixed(Code.Uuid, UUID, 16);
    case 'blob': return bytes(Code.Bytes, BLOB);
    case 'text': return bytes(Code.Bytes, VARCHAR);
    case 'json': return bytes(col.sourceType === 'json' ? Code.Bytes : Code.Jsonb, JSON_TYPE);
    case 'nested': return bytes(Code.Jsonb, JSON_TYPE); // selected as to_jsonb(…)
    case 'decimal': {
      const m = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(ddl);
      return m ? decimal(Number(m[1]), Number(m[2])) : bytes(Code.NumericText, VARCHAR);
    }
    default:
      return bytes(Code.Bytes, VARCHAR);
  }
}
