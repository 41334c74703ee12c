/**
 * A template's *shape*: its text with every run of template text and every
 * string literal inside a tag replaced by a numbered marker, and whitespace
 * between tokens inside tags reduced to one space. Two templates with the
 * same shape parse to the same syntax tree apart from those values and the
 * positions of their tokens, so nunjucks' parse, transform and code
 * generation run once per shape (jinja-compiler.ts) instead of once per
 * model — they were ≈60 % of rendering a cold 10,000-model project whose
 * models share a handful of shapes.
 *
 * The scan mirrors nunjucks' lexer (nunjucks/src/lexer.js) token for token,
 * so that the markers sit exactly where its string and data tokens are and
 * every token of the shape starts where a token of the template does (error
 * positions are mapped through those starts). Whatever the scan does not
 * follow exactly — `{% raw %}`, regex literals, an unterminated string or
 * tag, a stray `#}`, the marker characters themselves — returns undefined:
 * that template is compiled on its own, as before.
 *
 * Template text that is whitespace only stays in the shape as written (a
 * whitespace-control `-` may trim it to nothing, which changes the code);
 * other text becomes ` MARK ` and the compiled shape shows which side
 * nunjucks trimmed, so the same trim applies to the real text.
 */
import { lineIndex } from '../jobs/problem.js';
import { readPyString } from './py-string.js';

/** Private-use characters: a marker is `\uE000<n>\uE001`. */
export const MARK_OPEN = '\uE000';
export const MARK_CLOSE = '\uE001';

const WHITESPACE = ' \n\t\r\u00a0';
const DELIMITERS = '()[]{}%*-+~/#,:|.<>=!';
const BREAK = WHITESPACE + DELIMITERS;
const COMPLEX_OPS = new Set(['==', '===', '!=', '!==', '<=', '>=', '//', '**']);
const RAW_TAG = /\{%-?\s*(?:raw|verbatim)\b/;
const ALL_SPACE = /^\s*$/;

export type MarkerKind = 'string' | 'text';

export interface TemplateShape {
  /** The shape: equal for templates that compile to the same code. A valid template itself. */
  readonly canonical: string;
  /** Per marker, in order: a string literal (its value) or a run of template text (as written). */
  readonly kinds: readonly MarkerKind[];
  readonly values: readonly string[];
  /** Start offset of every token in `canonical` and in the template, index-aligned. */
  readonly canonicalStarts: readonly number[];
  readonly starts: readonly number[];
}

const marker = (n: number) => `${MARK_OPEN}${n}${MARK_CLOSE}`;

/** The shape of `source`, or undefined when it must be compiled on its own. */
export function templateShape(source: string): TemplateShape | undefined {
  if (source.includes(MARK_OPEN) || source.includes(MARK_CLOSE) || RAW_TAG.test(source)) return undefined;
  const kinds: MarkerKind[] = [];
  const values: string[] = [];
  const canonicalStarts: number[] = [];
  const starts: number[] = [];
  let out = '';
  const n = source.length;
  let i = 0;
  const token = (text: string, at: number) => {
    canonicalStarts.push(out.length);
    starts.push(at);
    out += text;
  };
  while (i < n) {
    const c0 = source.charCodeAt(i);
    const c1 = source.charCodeAt(i + 1);
    if (c0 === 0x7b /* { */ && (c1 === 0x25 /* % */ || c1 === 0x7b)) {
      const open = source.charCodeAt(i + 2) === 0x2d /* - */ ? source.slice(i, i + 3) : source.slice(i, i + 2);
      token(open, i);
      i += open.length;
      const end = codeTokens(source, i, (text, at, value) => {
        out += ' ';
        if (value === undefined) return token(text, at);
        token(`'${marker(values.length)}'`, at);
        kinds.push('string');
        values.push(value);
      });
      if (end < 0) return undefined;
      i = end;
      continue;
    }
    if (c0 === 0x7b && c1 === 0x23 /* # */) {
      const close = source.indexOf('#}', i + 2);
      if (close < 0) return undefined;
      const text = source.slice(i, close + 2);
      // What the parser reads of a comment: a `-` after `{#` and before `#}` (whitespace control).
      token(`{#${text.charAt(2) === '-' ? '-' : ''}c${text.charAt(text.length - 3) === '-' ? '-' : ''}#}`, i);
      i = close + 2;
      continue;
    }
    // Template text up to the next tag start; a `#}` in it is nunjucks' "unexpected end of comment".
    let j = i;
    for (;;) {
      const k = source.indexOf('{', j);
      if (k < 0 || k + 1 >= n) {
        j = n;
        break;
      }
      const next = source.charCodeAt(k + 1);
      if (next === 0x25 || next === 0x7b || next === 0x23) {
        j = k;
        break;
      }
      j = k + 1;
    }
    const text = source.slice(i, j);
    if (text.includes('#}')) return undefined;
    if (ALL_SPACE.test(text)) token(text, i);
    else {
      token(` ${marker(values.length)} `, i);
      kinds.push('text');
      values.push(text);
    }
    i = j;
  }
  if (starts.length === 0) return undefined;
  return { canonical: out, kinds, values, canonicalStarts, starts };
}

/**
 * The tokens of one tag from `at` (after `{%`/`{{`) through its end delimiter,
 * as nunjucks' lexer splits them (whitespace dropped): `emit(text, start,
 * value)` with `value` set for a string literal. Returns the offset after the
 * end delimiter, or -1 where the scan stops following the lexer.
 */
function codeTokens(s: string, at: number, emit: (text: string, start: number, value?: string) => void): number {
  const n = s.length;
  let i = at;
  while (i < n) {
    const c = s[i]!;
    if (c === '"' || c === "'") {
      // The string's value as our lexer reads it (py-string.ts).
      let j = i;
      const reader = { current: () => s[j] ?? '', forward: () => void j++, isFinished: () => j >= n };
      let value: string;
      try {
        value = readPyString(reader, c);
      } catch {
        return -1;
      }
      if (j > n) return -1; // unterminated
      j--; // on the closing quote
      emit('', i, value);
      i = j + 1;
      continue;
    }
    if (WHITESPACE.includes(c)) {
      i++;
      continue;
    }
    for (const end of ['%}', '-%}', '}}', '-}}']) {
      if (s.startsWith(end, i)) {
        emit(end, i);
        return i + end.length;
      }
    }
    if (c === 'r' && s[i + 1] === '/') return -1; // a regex literal: not followed
    if (DELIMITERS.includes(c)) {
      let op = c;
      if (COMPLEX_OPS.has(op + (s[i + 1] ?? ''))) {
        op += s[i + 1];
        if (COMPLEX_OPS.has(op + (s[i + 2] ?? ''))) op += s[i + 2];
      }
      emit(op, i);
      i += op.length;
      continue;
    }
    let j = i;
    while (j < n && !BREAK.includes(s[j]!)) j++;
    let word = s.slice(i, j);
    if (/^[-+]?[0-9]+$/.test(word) && s[j] === '.') {
      let k = j + 1;
      while (k < n && s.charCodeAt(k) >= 0x30 && s.charCodeAt(k) <= 0x39) k++;
      if (k >= n) return -1;
      word = s.slice(i, k);
      j = k;
    }
    emit(word, i);
    i = j;
  }
  return -1; // end of template inside a tag
}

/** Line and column (0-based, as nunjucks counts: `\n` only) of each offset in `text`. */
export function positionsOf(text: string, offsets: readonly number[]): [line: number, col: number][] {
  const at = lineIndex(text);
  return offsets.map((off) => {
    const p = at(off);
    return [p.line - 1, p.column - 1];
  });
}
