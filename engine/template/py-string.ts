/**
 * String literals as Python reads them. nunjucks' lexer knows only `\n`, `\t`
 * and `\r` and drops the backslash of every other escape, so `'\d+'` became
 * `d+` and `'a \<newline>b'` kept the newline. Python keeps unknown escapes
 * as written, joins lines at a backslash-newline and reads `\xNN`, `\uNNNN`,
 * `\UNNNNNNNN`, octal `\NNN` and the single-letter escapes.
 */

/** The tokenizer members the reader uses (nunjucks' lexer.js). */
export interface StringTokenizer {
  current(): string;
  forward(): void;
  isFinished(): boolean;
}

const SIMPLE: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '\n': '',
};

const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** Reads a literal starting at its opening quote; leaves the tokenizer after the closing quote. */
export function readPyString(t: StringTokenizer, quote: string): string {
  t.forward();
  let out = '';
  while (!t.isFinished() && t.current() !== quote) {
    const c = t.current();
    t.forward();
    if (c !== '\\') {
      out += c;
      continue;
    }
    out += readEscape(t);
  }
  t.forward();
  return out;
}

function readEscape(t: StringTokenizer): string {
  const c = t.current();
  if (c === '') return '\\';
  if (Object.hasOwn(SIMPLE, c)) {
    t.forward();
    return SIMPLE[c]!;
  }
  const hex = HEX_LENGTH[c];
  if (hex !== undefined) {
    let digits = '';
    t.forward();
    while (digits.length < hex && /[0-9a-fA-F]/.test(t.current())) {
      digits += t.current();
      t.forward();
    }
    if (digits.length < hex) throw new SyntaxError(`truncated \\${c}${'X'.repeat(hex)} escape in a string literal`);
    return String.fromCodePoint(parseInt(digits, 16));
  }
  if (/[0-7]/.test(c)) {
    let digits = '';
    while (digits.length < 3 && /[0-7]/.test(t.current())) {
      digits += t.current();
      t.forward();
    }
    return String.fromCodePoint(parseInt(digits, 8));
  }
  // Python keeps an unknown escape as written: '\d' is backslash, d.
  return '\\';
}
