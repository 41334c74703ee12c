/**
 * `{…}` templates in pipeline step strings: brace text is an
 * expression only when it starts with a scope name (`env`, `store`, `state`,
 * `loop`, `timestamp`, `execution`) or a known function call; any other
 * brace text — SQL, JSON, `${NAME}` substitutions — stays as written. The
 * closing brace is the first `}` outside a quoted string, so `{coalesce(x, '}')}`
 * is one expression.
 */
import { EXPRESSION_FUNCTIONS, EXPRESSION_SCOPES } from './expression.js';

export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  /** `offset` is where `source` starts inside the template string. */
  | { readonly kind: 'expr'; readonly source: string; readonly offset: number };

const SCOPE_START = new RegExp(`^\\s*(?:${EXPRESSION_SCOPES.join('|')})(?![A-Za-z0-9_])`);
const CALL_START = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(/;
const FUNCTIONS = new Set(EXPRESSION_FUNCTIONS);

/** True when brace text is a template expression rather than literal text. */
export function isTemplateExpression(inner: string): boolean {
  if (SCOPE_START.test(inner)) return true;
  const call = CALL_START.exec(inner);
  return call !== null && FUNCTIONS.has(call[1]!);
}

/** Longest `{…}` expression accepted; longer brace text is reported, never evaluated. */
export const MAX_EXPRESSION_LENGTH = 4096;

const SQ = 39; // '
const DQ = 34; // "
const BACKSLASH = 92;
const CLOSE = 125; // }

/**
 * `closing(open)`: index of the `}` closing a brace opened at `open`,
 * skipping quoted strings; -1 when none. A scan is a deterministic function of
 * (position, quote state), so every (position, state) a scan passes is
 * remembered with the scan's answer: no position is scanned twice in the same
 * state, and finding the closing braces of all `{` of a text is linear. (The
 * naive scan per `{` was quadratic: 60,000 unclosed `{` took seconds.)
 */
function closingBraces(text: string): (open: number) => number {
  let memo: Int32Array | undefined; // index = position * 3 + state; -2 = unknown
  return (open) => {
    memo ??= new Int32Array(text.length * 3).fill(-2);
    const path: number[] = [];
    let state = 0; // 0 unquoted, 1 in '…', 2 in "…"
    let result = -1;
    for (let i = open + 1; i < text.length; i++) {
      const key = i * 3 + state;
      const known = memo[key]!;
      if (known !== -2) {
        result = known;
        break;
      }
      path.push(key);
      const c = text.charCodeAt(i);
      if (state !== 0) {
        if (c === BACKSLASH) i++;
        else if (c === (state === 1 ? SQ : DQ)) state = 0;
      } else if (c === SQ) state = 1;
      else if (c === DQ) state = 2;
      else if (c === CLOSE) {
        result = i;
        break;
      }
    }
    for (const key of path) memo[key] = result;
    return result;
  };
}

/**
 * `isExpr` decides which brace text is an expression (default: the scopes and
 * functions; the pipeline runner adds its own scopes, e.g. hooks' `model`).
 */
export function templateParts(text: string, isExpr: (inner: string) => boolean = isTemplateExpression): TemplatePart[] {
  const parts: TemplatePart[] = [];
  const closingBrace = closingBraces(text);
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{', i);
    if (open < 0) break;
    const close = open > 0 && text[open - 1] === '$' ? -1 : closingBrace(open);
    const inner = close < 0 ? '' : text.slice(open + 1, close);
    if (close < 0 || !isExpr(inner)) {
      literal += text.slice(i, open + 1);
      i = open + 1;
      continue;
    }
    literal += text.slice(i, open);
    if (literal !== '') parts.push({ kind: 'text', text: literal });
    literal = '';
    parts.push({ kind: 'expr', source: inner, offset: open + 1 });
    i = close + 1;
  }
  literal += text.slice(i);
  if (literal !== '') parts.push({ kind: 'text', text: literal });
  return parts;
}

/** True when a string holds at least one template expression. */
export function hasTemplate(text: string): boolean {
  return text.includes('{') && templateParts(text).some((p) => p.kind === 'expr');
}
