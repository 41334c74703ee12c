/**
 * `target_options.adjust_column_type: true`: an existing target column whose
 * type cannot hold what the source now sends is widened to the source's type
 * before the load (`ALTER … TYPE`), the way Sling adjusts columns. Only
 * widening happens: a wider target type is kept, and so is a pair of types
 * with no order between them (a boolean and a date), which is logged.
 */
import { quoteIdent, quoteRelation } from '../targets/relation.js';
import type { Relation } from '../targets/target.js';
import type { Dialect } from './column-types.js';

/** A type reduced to its family and an order inside it (size, precision, length). */
interface Shape {
  readonly family: 'int' | 'float' | 'numeric' | 'text' | 'time' | 'other';
  readonly size: number;
  readonly scale?: number;
  readonly name: string;
}

const INT_SIZES: Readonly<Record<string, number>> = { tinyint: 1, int1: 1, smallint: 2, int2: 2, integer: 4, int: 4, int4: 4, bigint: 8, int8: 8, hugeint: 16 };
const FLOAT_SIZES: Readonly<Record<string, number>> = { real: 4, float4: 4, float: 8, 'double precision': 8, double: 8, float8: 8 };
const TIME_RANKS: Readonly<Record<string, number>> = { date: 1, timestamp: 2, 'timestamp without time zone': 2, timestamptz: 3, 'timestamp with time zone': 3 };

export function typeShape(type: string): Shape {
  const t = type.trim().toLowerCase().replace(/\s+/g, ' ');
  const params = /\(([^)]*)\)\s*$/.exec(t)?.[1]?.split(',').map((p) => Number(p.trim()));
  const base = t.replace(/\s*\([^)]*\)\s*$/, '');
  if (base in INT_SIZES) return { family: 'int', size: INT_SIZES[base]!, name: t };
  if (base in FLOAT_SIZES) return { family: 'float', size: FLOAT_SIZES[base]!, name: t };
  if (base === 'numeric' || base === 'decimal') {
    return params && Number.isFinite(params[0]) ? { family: 'numeric', size: params[0]!, scale: params[1] ?? 0, name: t } : { family: 'numeric', size: Infinity, scale: Infinity, name: t };
  }
  if (['text', 'varchar', 'character varying', 'char', 'character', 'bpchar', 'string'].includes(base)) {
    return { family: 'text', size: params && Number.isFinite(params[0]) ? params[0]! : Infinity, name: t };
  }
  if (base in TIME_RANKS) return { family: 'time', size: TIME_RANKS[base]!, name: t };
  return { family: 'other', size: 0, name: t };
}

/**
 * 'widen' when a column of type `target` cannot hold values of `source`;
 * 'fits' when it can; 'unordered' when the two cannot be compared.
 */
export function compareTypes(target: string, source: string): 'widen' | 'fits' | 'unordered' {
  const t = typeShape(target);
  const s = typeShape(source);
  if (t.name === s.name || t.family === 'text' && t.size === Infinity) return 'fits';
  if (s.family === 'text') return 'widen'; // text fits nowhere but in text
  if (t.family === s.family) {
    if (t.family === 'numeric') {
      const intDigits = (x: Shape) => x.size - (x.scale ?? 0);
      return intDigits(s) > intDigits(t) || (s.scale ?? 0) > (t.scale ?? 0) ? 'widen' : 'fits';
    }
    return s.size > t.size ? 'widen' : 'fits';
  }
  if (t.family === 'text') return s.family === 'other' ? 'unordered' : 'fits';
  // Decimals into an integer column lose their fraction; integers into float or numeric keep theirs.
  if (t.family === 'int' && (s.family === 'float' || s.family === 'numeric')) return 'widen';
  if ((t.family === 'float' || t.family === 'numeric') && s.family === 'int') return 'fits';
  if (t.family === 'float' && s.family === 'numeric') return 'fits';
  return 'unordered';
}

/** The statement that changes a column's type, converting the stored values. */
export function alterTypeSql(dialect: Dialect, rel: Relation, column: string, ddl: string): string {
  const c = quoteIdent(column);
  return dialect === 'postgres'
    ? `ALTER TABLE ${quoteRelation(rel)} ALTER COLUMN ${c} TYPE ${ddl} USING ${c}::${ddl}`
    : `ALTER TABLE ${quoteRelation(rel)} ALTER COLUMN ${c} SET DATA TYPE ${ddl}`;
}
