/**
 * What `run_query` / `load_result(...).table` hand back, shaped like dbt's
 * agate Table: iterable rows (each indexable by position and by column
 * name), `.rows`, `.column_names`, `.columns` (by position or name, with
 * `.items()`, each column with `.values()`), `.print_table()`.
 */
import type { Logger } from '../../log.js';
import type { QueryTable } from './compile-time-query/query-session.js';

/** A class, not a mapping: `.values()` must be the column's values, not a dict's. */
export class AgateColumn {
  constructor(
    readonly name: string,
    private readonly data: readonly unknown[],
  ) {}
  values(): unknown[] {
    return [...this.data];
  }
  values_distinct(): unknown[] {
    return [...new Set(this.data)];
  }
}

/** Rows or columns: a list that is also keyed by name (agate's MappedSequence). */
function mapped<T>(items: T[], keys: readonly string[]): T[] {
  const out = [...items];
  keys.forEach((k, i) => {
    if (!(k in out)) Object.defineProperty(out, k, { value: items[i], enumerable: false });
  });
  Object.defineProperty(out, 'items', { value: () => keys.map((k, i) => [k, items[i]]), enumerable: false });
  Object.defineProperty(out, 'keys', { value: () => [...keys], enumerable: false });
  Object.defineProperty(out, 'values', { value: () => [...items], enumerable: false });
  return out;
}

export function agateTable(t: QueryTable, logger?: Logger): unknown[] {
  const rows = t.rows.map((r) => mapped([...r], t.columns));
  const columns = mapped(
    t.columns.map((name, i) => new AgateColumn(name, rows.map((r) => r[i]))),
    t.columns,
  );
  const table = [...rows];
  const extra: Record<string, unknown> = {
    rows,
    column_names: [...t.columns],
    columns,
    column_types: t.columns.map(() => null),
    print_table: () => {
      const lines = [t.columns.join(' | '), ...t.rows.map((r) => r.map((v) => (v === null ? 'null' : String(v))).join(' | '))];
      logger?.log('info', lines.join('\n'));
      return '';
    },
  };
  for (const [k, v] of Object.entries(extra)) Object.defineProperty(table, k, { value: v, enumerable: false });
  return table;
}
