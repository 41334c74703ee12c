/**
 * PostgreSQL `COPY … TO STDOUT` text format → rows of text values.
 *
 * In the text format a row is exactly one line (newlines inside values are
 * written as `\n`), columns are separated by tabs, NULL is `\N`, and a
 * backslash escapes the next character (`\b \f \n \r \t \v \\`). Lines are
 * cut on the byte buffer before UTF-8 decoding, so a multi-byte character
 * split between two network chunks is never garbled. Rows are yielded in
 * batches, one per incoming chunk, so memory stays at one chunk.
 */
export type TextRow = (string | null)[];

const ESCAPES: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

export function unescapeCopyText(value: string): string {
  if (!value.includes('\\')) return value;
  return value.replace(/\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))/g, (_, oct: string | undefined, hex: string | undefined, ch: string | undefined) => {
    if (oct !== undefined) return String.fromCharCode(parseInt(oct, 8));
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    return ESCAPES[ch!] ?? ch!;
  });
}

export function parseCopyTextLine(line: string): TextRow {
  const fields = line.split('\t');
  const row: TextRow = new Array(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    row[i] = f === '\\N' ? null : unescapeCopyText(f);
  }
  return row;
}

/** Batches of rows from a COPY text byte stream. */
export async function* copyTextRows(stream: AsyncIterable<Buffer | string>): AsyncGenerator<TextRow[]> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const piece of stream) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    const last = chunk.lastIndexOf(0x0a);
    if (last < 0) {
      carry = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
      continue;
    }
    const head = carry.length === 0 ? chunk.subarray(0, last) : Buffer.concat([carry, chunk.subarray(0, last)]);
    carry = Buffer.from(chunk.subarray(last + 1));
    const lines = head.toString('utf8').split('\n');
    const rows: TextRow[] = new Array(lines.length);
    for (let i = 0; i < lines.length; i++) rows[i] = parseCopyTextLine(lines[i]!);
    yield rows;
  }
  if (carry.length > 0) yield [parseCopyTextLine(carry.toString('utf8'))];
}

/**
 * An ISO 8601 interval as PostgreSQL prints it with `IntervalStyle =
 * iso_8601` (`P1Y2M3DT4H5M6.5S`, `PT-1H`, `-P1D` is not produced) →
 * DuckDB's months, days and microseconds.
 */
export function parseIsoInterval(text: string): { months: number; days: number; micros: bigint } {
  const m = /^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (m === null) throw new Error(`unrecognised interval "${text}"`);
  const n = (i: number) => (m[i] === undefined ? 0 : Number(m[i]));
  const months = n(1) * 12 + n(2);
  const days = n(3) * 7 + n(4);
  const secText = m[7] ?? '0';
  const negative = secText.startsWith('-');
  const [whole, frac = ''] = secText.replace('-', '').split('.');
  const secMicros = BigInt(whole!) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
  const micros = BigInt(n(5)) * 3_600_000_000n + BigInt(n(6)) * 60_000_000n + (negative ? -secMicros : secMicros);
  return { months, days, micros };
}
