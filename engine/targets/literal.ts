/**
 * Literals: a probed or stored bound becomes SQL text that both targets
 * compare correctly against the `update_key` column. Numbers bare; dates
 * `'YYYY-MM-DD'`; timestamps `'YYYY-MM-DD HH:MM:SS[.ffffff]'`; timestamptz
 * `'YYYY-MM-DDTHH:MM:SS[.ffffff]Z'` in UTC; anything else a quoted string.
 * The fraction is written only when it is not zero, with all six digits.
 */
import type { ValueCategory } from './target.js';

export function quoteString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

const ZERO_FRACTION = /\.0{1,9}$/;

/** `2024-01-02 03:04:05.120000` → `2024-01-02 03:04:05.120000`; `.000000` removed. */
function dropZeroFraction(ts: string): string {
  return ts.replace(ZERO_FRACTION, '');
}

/** Formats `text` (as produced by `Dialect.maxTextSql`) for `category`; null stays null. */
export function formatLiteral(category: ValueCategory, text: string | null): string | null {
  if (text === null) return null;
  switch (category) {
    case 'number':
    case 'boolean':
      return text;
    case 'date':
      return quoteString(text);
    case 'timestamp':
      return quoteString(dropZeroFraction(text));
    case 'timestamptz':
      return quoteString(`${dropZeroFraction(text).replace(' ', 'T')}Z`);
    case 'string':
      return quoteString(text);
  }
}
