/**
 * Splits a rendered model body into pre-statements, the one query, and
 * post-statements. Classification looks only at the
 * leading keyword — and, for WITH, at the keyword of the main statement after
 * the CTE list — because the contract needs the statement kind, not a parse.
 *
 * Errors carry only the statement-splitting detail; the caller prefixes
 * `model '<n>': could not parse multi-statement models: `.
 */
import { EngineError } from '../errors.js';
import { codeTokens, isPunct, keywordOf, tokenize, type Token } from './lexer.js';

export type StatementKind = 'QUERY' | 'DDL' | 'DML' | 'OTHER';

export interface SplitResult {
  readonly pre: readonly string[];
  readonly query: string;
  readonly post: readonly string[];
}

export interface StatementClass {
  readonly kind: StatementKind;
  /** The deciding keyword, upper-cased; for WITH statements, the main statement's keyword. */
  readonly keyword: string;
}

const QUERY_KEYWORDS = new Set(['SELECT', 'VALUES', 'TABLE', 'FROM']);
const DDL_KEYWORDS = new Set(['CREATE', 'ALTER', 'DROP', 'TRUNCATE', 'COMMENT', 'GRANT', 'REVOKE']);
const DML_KEYWORDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);
/** Keywords that can open the main statement of a WITH. */
const WITH_MAIN_KEYWORDS = new Set([...QUERY_KEYWORDS, 'INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** Index of the first code token after any opening parentheses. */
function skipOpenParens(sql: string, code: readonly Token[], from: number): number {
  let k = from;
  while (isPunct(sql, code[k], '(')) k++;
  return k;
}

/**
 * Index of the token that opens the main statement of a WITH whose CTE list
 * starts at `from`, or -1. At parenthesis depth 0 the CTE list holds only
 * names, AS, NOT, MATERIALIZED, column lists, bodies, commas and SEARCH/CYCLE
 * clauses, so the main statement is the first depth-0 statement keyword (not
 * a CTE named like one, i.e. not followed by AS) or a `(` right after a `)`.
 */
function findWithMain(sql: string, code: readonly Token[], from: number): number {
  let depth = 0;
  for (let k = from; k < code.length; k++) {
    const t = code[k];
    if (isPunct(sql, t, '(')) {
      if (depth === 0 && k > from && isPunct(sql, code[k - 1], ')')) return k;
      depth++;
    } else if (isPunct(sql, t, ')')) {
      depth--;
    } else if (depth === 0 && WITH_MAIN_KEYWORDS.has(keywordOf(sql, t)) && keywordOf(sql, code[k + 1]) !== 'AS') {
      return k;
    }
  }
  return -1;
}

function classifyCode(sql: string, code: readonly Token[], from: number): StatementClass {
  const k = skipOpenParens(sql, code, from);
  const first = code[k];
  if (first === undefined) return { kind: 'OTHER', keyword: '' };
  const keyword = first.kind === 'word' ? keywordOf(sql, first) : sql.slice(first.start, first.end).toUpperCase();
  if (keyword === 'WITH') {
    const main = findWithMain(sql, code, k + 1);
    return main < 0 ? { kind: 'OTHER', keyword } : classifyCode(sql, code, main);
  }
  if (QUERY_KEYWORDS.has(keyword)) return { kind: 'QUERY', keyword };
  if (DDL_KEYWORDS.has(keyword)) return { kind: 'DDL', keyword };
  if (DML_KEYWORDS.has(keyword)) return { kind: 'DML', keyword };
  return { kind: 'OTHER', keyword };
}

export function classifyStatement(stmt: string): StatementClass {
  return classifyCode(stmt, codeTokens(tokenize(stmt)), 0);
}

interface Statement {
  readonly text: string;
  readonly cls: StatementClass;
}

/** Statements between top-level `;`, without those holding only whitespace or comments. */
function statementsOf(sql: string, tokens: readonly Token[]): Statement[] {
  const out: Statement[] = [];
  let segStart = 0;
  let code: Token[] = [];
  const flush = (segEnd: number): void => {
    if (code.length > 0) {
      out.push({ text: sql.slice(segStart, segEnd).trim(), cls: classifyCode(sql, code, 0) });
    }
    code = [];
  };
  for (const t of tokens) {
    if (isPunct(sql, t, ';')) {
      flush(t.start);
      segStart = t.end;
    } else if (t.kind !== 'comment') {
      code.push(t);
    }
  }
  flush(sql.length);
  return out;
}

export function splitModelSql(sql: string): SplitResult {
  const tokens = tokenize(sql);
  if (!tokens.some((t) => isPunct(sql, t, ';'))) return { pre: [], query: sql.trim(), post: [] };

  const statements = statementsOf(sql, tokens);
  if (statements.length === 0) throw new EngineError('compile', 'no SQL statements found');
  if (statements.length === 1) {
    const { kind, keyword } = statements[0].cls;
    if (kind !== 'QUERY') {
      throw new EngineError('compile', `model file contains a single ${kind} statement (${keyword}), expected a SELECT query`);
    }
    return { pre: [], query: statements[0].text, post: [] };
  }

  const queries = statements.flatMap((s, i) => (s.cls.kind === 'QUERY' ? [i] : []));
  if (queries.length === 0) {
    throw new EngineError(
      'compile',
      `no SELECT query found in model file; found ${statements.length} statements but none are queries`,
    );
  }
  if (queries.length > 1) {
    throw new EngineError('compile', `found ${queries.length} SELECT queries in model file; expected exactly 1`);
  }
  const q = queries[0];
  const texts = statements.map((s) => s.text);
  return { pre: texts.slice(0, q), query: texts[q], post: texts.slice(q + 1) };
}
