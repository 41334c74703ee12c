/**
 * What differs in SQL text between targets, as data plus small functions:
 * quoting, seed column type names, and how incremental-condition literals are read
 * back from a `MAX()` probe. Each target folder exports one `Dialect`.
 */
import type { Relation, SeedColumnType, TargetType, ValueCategory } from './target.js';

export interface Dialect {
  readonly type: TargetType;
  quoteIdent(part: string): string;
  quoteRelation(rel: Relation): string;
  /** Column type for a seed column (`bigint` / `BIGINT`). */
  seedColumnType(type: SeedColumnType): string;
  /** Classifies a column type name as reported by information_schema. */
  valueCategory(dataType: string): ValueCategory;
  /**
   * SQL expression over `quotedColumn` yielding `MAX()` as text in a fixed
   * shape: numbers as the database prints them, dates `YYYY-MM-DD`,
   * timestamps (timestamptz converted to UTC) `YYYY-MM-DD HH:MM:SS.ffffff`.
   */
  maxTextSql(quotedColumn: string, category: ValueCategory): string;
}
