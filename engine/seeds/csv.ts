/**
 * RFC 4180 reader for CSV seeds. A seed is loaded whole,
 * so this parses the decoded file text in one forward pass: unquoted fields are
 * sliced straight out of the text, quoted fields are found with indexOf and
 * un-doubled once, so the cost stays linear in the file size (no per-character
 * string concatenation, no re-scanning).
 *
 * Choices the RFC leaves open, made conservatively:
 * - an empty physical line between records is skipped (as Python's csv module
 *   and DuckDB's reader do); a NULL in a one-column seed is written `""` or `null`;
 * - a `"` inside an unquoted field is kept as a literal character;
 * - a lone CR (not followed by LF) is data, not a line break;
 * - anything but `,` or a line end after a closing quote is an error.
 */
import { seedError } from './seed-error.js';

/** A parsed CSV seed: header names (after `column_<i>` defaults) and untyped rows. */
export interface CsvTable {
  readonly header: readonly string[];
  readonly rows: readonly (readonly (string | null)[])[];
}

const LF = 10;
const CR = 13;
const QUOTE = 34;

/** Parses CSV text (BOM already removed or not) into header and rows; errors name the seed. */
/** `delimiter`: one character (dbt seeds' `delimiter` config); a comma unless given. */
export function parseCsv(name: string, text: string, delimiter = ','): CsvTable {
  const COMMA = delimiter.charCodeAt(0);
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const end = src.length;
  let pos = 0;
  let line = 1;

  /** Advances past a blank line at `pos`; returns false when `pos` starts a record. */
  const skipBlankLine = (): boolean => {
    const c = src.charCodeAt(pos);
    if (c === LF) {
      pos += 1;
    } else if (c === CR && src.charCodeAt(pos + 1) === LF) {
      pos += 2;
    } else {
      return false;
    }
    line += 1;
    return true;
  };

  /**
   * Reads one record starting at `pos` and consumes its line end. With
   * `raw` the values are kept as written (header); otherwise NULL rules apply.
   */
  const readRecord = (raw: boolean): (string | null)[] => {
    const fields: (string | null)[] = [];
    for (;;) {
      let value: string | null;
      if (src.charCodeAt(pos) === QUOTE) {
        const start = pos + 1;
        const fieldLine = line;
        let scan = start;
        let doubled = false;
        let close: number;
        for (;;) {
          close = src.indexOf('"', scan);
          if (close === -1) throw seedError(name, `line ${fieldLine}: unterminated quoted field`);
          if (src.charCodeAt(close + 1) !== QUOTE) break;
          doubled = true;
          scan = close + 2;
        }
        for (let nl = src.indexOf('\n', start); nl !== -1 && nl < close; nl = src.indexOf('\n', nl + 1)) line += 1;
        const body = src.slice(start, close);
        const unquoted = doubled ? body.replaceAll('""', '"') : body;
        value = raw || unquoted !== '' ? unquoted : null; // a quoted "null" stays text
        pos = close + 1;
        const next = src.charCodeAt(pos);
        if (pos < end && next !== COMMA && next !== LF && !(next === CR && src.charCodeAt(pos + 1) === LF)) {
          throw seedError(name, `line ${line}: expected ',' or a line end after a closing quote`);
        }
      } else {
        const start = pos;
        while (pos < end) {
          const c = src.charCodeAt(pos);
          if (c === COMMA || c === LF || (c === CR && src.charCodeAt(pos + 1) === LF)) break;
          pos += 1;
        }
        const field = src.slice(start, pos);
        value = raw || !(field === '' || (field.length === 4 && field.toLowerCase() === 'null')) ? field : null;
      }
      fields.push(value);
      if (pos >= end) return fields;
      const c = src.charCodeAt(pos);
      if (c === COMMA) {
        pos += 1;
        continue;
      }
      pos += c === CR ? 2 : 1;
      line += 1;
      return fields;
    }
  };

  while (pos < end && skipBlankLine());
  if (pos >= end) throw seedError(name, 'file is empty');
  const header = readRecord(true).map((h, i) => (h === '' || h === null ? `column_${i + 1}` : h));
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) throw seedError(name, `duplicate column '${h}'`);
    seen.add(h);
  }

  const width = header.length;
  const rows: (string | null)[][] = [];
  while (pos < end) {
    if (skipBlankLine()) continue;
    const recordLine = line;
    const record = readRecord(false);
    if (record.length !== width) throw seedError(name, `line ${recordLine}: expected ${width} fields, got ${record.length}`);
    rows.push(record);
  }
  return { header, rows };
}
