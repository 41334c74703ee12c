/**
 * Table references after FROM and JOIN: found once on
 * the rendered SQL, used both to rewrite prod names to current names and to
 * detect dependencies. The grammar is deliberately shallow — a name of 1–3
 * bare or "quoted" parts right after the anchor — with the exclusions the
 * contract lists: CTE names, keywords (`FROM (`, `FROM LATERAL`), function
 * calls (`FROM unnest(…)`), strings and comments.
 *
 * Beyond the contract's minimum it also follows comma-separated FROM lists
 * (`FROM a, b`, `FROM a JOIN b ON …, c`) and parenthesised joins, and it
 * ignores the FROM inside `extract(… FROM x)`-style functions and in
 * `IS DISTINCT FROM x`; otherwise those would miss real DAG edges or add
 * false ones.
 */
import { codeTokens, identifierText, isPunct, keywordOf, matchParens, tokenize, type Token } from './lexer.js';

export interface TableRef {
  /** Name parts as text: quotes removed, `""` unescaped, case kept. */
  readonly parts: readonly string[];
  /** True when any part was written "quoted". */
  readonly quoted: boolean;
  /** Offsets of the whole reference in the SQL (first part's start, last part's end). */
  readonly start: number;
  readonly end: number;
}

/** Words skipped between the anchor and the table name. */
const ITEM_PREFIXES = new Set(['LATERAL', 'ONLY']);

/** Functions whose arguments use FROM as a separator, not a table clause. */
const FROM_ARGUMENT_FUNCTIONS = new Set(['EXTRACT', 'SUBSTRING', 'SUBSTR', 'TRIM', 'OVERLAY', 'POSITION']);

/** Reserved words that can follow FROM/JOIN but never start a table name. */
const KEYWORDS = new Set([
  'ALL', 'AND', 'ANTI', 'ANY', 'AS', 'ASOF', 'BETWEEN', 'BY', 'CASE', 'CROSS', 'CURRENT_DATE', 'CURRENT_TIME',
  'CURRENT_TIMESTAMP', 'DEFAULT', 'DISTINCT', 'ELSE', 'END', 'EXCEPT', 'EXISTS', 'FALSE', 'FETCH', 'FOR', 'FROM',
  'FULL', 'GROUP', 'HAVING', 'ILIKE', 'IN', 'INNER', 'INTERSECT', 'INTO', 'IS', 'JOIN', 'LATERAL', 'LEFT', 'LIKE',
  'LIMIT', 'NATURAL', 'NOT', 'NULL', 'OFFSET', 'ON', 'ONLY', 'OR', 'ORDER', 'OUTER', 'PIVOT', 'POSITIONAL',
  'QUALIFY', 'RETURNING', 'RIGHT', 'SELECT', 'SEMI', 'SET', 'SOME', 'TABLE', 'TABLESAMPLE', 'THEN', 'TRUE',
  'UNION', 'UNPIVOT', 'USING', 'VALUES', 'WHEN', 'WHERE', 'WINDOW', 'WITH',
]);

const BARE_PART = /^[a-z_][a-z0-9_]*$/;

/** A part is bare when it matches `^[a-z_][a-z0-9_]*$`, otherwise "quoted"; forceQuote quotes every part. */
export function renderName(parts: readonly string[], forceQuote: boolean): string {
  return parts.map((p) => (!forceQuote && BARE_PART.test(p) ? p : `"${p.replaceAll('"', '""')}"`)).join('.');
}

/** A token usable as a name part: a quoted identifier, or a word that is not a number. */
function isNamePart(sql: string, t: Token | undefined): t is Token {
  if (t === undefined) return false;
  if (t.kind === 'quoted') return true;
  if (t.kind !== 'word') return false;
  const c = sql.charCodeAt(t.start);
  return !(c >= 48 && c <= 57) && c !== 36;
}

/** Keywords that end a FROM clause at its own depth (`ON CONFLICT` is checked separately). */
const FROM_CLAUSE_END = new Set([
  'DO', 'EXCEPT', 'FETCH', 'FOR', 'FROM', 'GROUP', 'HAVING', 'INTERSECT', 'LIMIT', 'OFFSET', 'ORDER', 'QUALIFY',
  'RETURNING', 'SELECT', 'SET', 'UNION', 'WHERE', 'WINDOW',
]);

function endsFromClause(sql: string, code: readonly Token[], k: number): boolean {
  const kw = keywordOf(sql, code[k]);
  return FROM_CLAUSE_END.has(kw) || (kw === 'ON' && keywordOf(sql, code[k + 1]) === 'CONFLICT');
}

/** Names defined as CTEs: `WITH [RECURSIVE] x [(cols)] AS [NOT] [MATERIALIZED] (` and `, x … AS (`; lower-cased. */
function cteNames(sql: string, code: readonly Token[], parens: Int32Array): Set<string> {
  const names = new Set<string>();
  for (let k = 0; k < code.length; k++) {
    let n: number;
    const kw = keywordOf(sql, code[k]);
    if (kw === 'WITH') n = keywordOf(sql, code[k + 1]) === 'RECURSIVE' ? k + 2 : k + 1;
    else if (isPunct(sql, code[k], ',')) n = k + 1;
    else continue;
    const name = code[n];
    if (!isNamePart(sql, name)) continue;
    let j = n + 1;
    if (isPunct(sql, code[j], '(')) j = parens[j] + 1;
    if (keywordOf(sql, code[j]) !== 'AS') continue;
    j++;
    if (keywordOf(sql, code[j]) === 'NOT') j++;
    if (keywordOf(sql, code[j]) === 'MATERIALIZED') j++;
    if (isPunct(sql, code[j], '(')) names.add(identifierText(sql, name).toLowerCase());
  }
  return names;
}

export function findTableRefs(sql: string): TableRef[] {
  const code = codeTokens(tokenize(sql));
  const parens = matchParens(sql, code);
  const ctes = cteNames(sql, code, parens);
  const refs: TableRef[] = [];

  /** Parses one FROM item at `k`, recording a table reference; returns the index after the item. */
  const parseItem = (start: number): number => {
    let k = start;
    while (ITEM_PREFIXES.has(keywordOf(sql, code[k]))) k++;
    if (isPunct(sql, code[k], '(')) {
      // `(select …)` stops at the keyword (its own FROM is found later); `(a join b …)` starts with a table.
      parseItem(k + 1);
      return parens[k] + 1;
    }
    if (code[k]?.kind === 'string') return k + 1; // DuckDB: FROM 'file.csv'
    if (!isNamePart(sql, code[k]) || KEYWORDS.has(keywordOf(sql, code[k]))) return k;
    const partTokens = [code[k]];
    k++;
    while (isPunct(sql, code[k], '.') && isNamePart(sql, code[k + 1])) {
      partTokens.push(code[k + 1]);
      k += 2;
    }
    if (isPunct(sql, code[k], '(')) return parens[k] + 1; // function call: unnest(…), generate_series(…)
    const parts = partTokens.map((t) => identifierText(sql, t));
    const quoted = partTokens.some((t) => t.kind === 'quoted');
    const isCte = parts.length === 1 && ctes.has(parts[0].toLowerCase());
    if (parts.length <= 3 && !isCte) {
      refs.push({ parts, quoted, start: partTokens[0].start, end: partTokens[partTokens.length - 1].end });
    }
    return k;
  };

  /**
   * Parses the items of a FROM clause whose first item starts at `start`.
   * Commas at the clause's own depth separate items (join conditions, aliases
   * and column lists have none outside parentheses); the clause ends at a
   * closing `)`, a `;` or a clause keyword. Parenthesised groups are jumped
   * over, so every token is visited by at most one clause scan per depth.
   */
  const parseFromClause = (start: number): void => {
    let k = parseItem(start);
    while (k < code.length) {
      const t = code[k];
      if (isPunct(sql, t, '(')) k = parens[k] + 1;
      else if (isPunct(sql, t, ',')) k = parseItem(k + 1);
      else if (isPunct(sql, t, ')') || isPunct(sql, t, ';') || endsFromClause(sql, code, k)) return;
      else k++;
    }
  };

  const openers: string[] = []; // keyword before each enclosing '(' (innermost last)
  for (let k = 0; k < code.length; k++) {
    const t = code[k];
    if (isPunct(sql, t, '(')) {
      openers.push(keywordOf(sql, code[k - 1]));
      continue;
    }
    if (isPunct(sql, t, ')')) {
      openers.pop();
      continue;
    }
    const kw = keywordOf(sql, t);
    if (kw === 'JOIN') {
      parseItem(k + 1);
    } else if (kw === 'FROM') {
      if (FROM_ARGUMENT_FUNCTIONS.has(openers[openers.length - 1] ?? '')) continue;
      if (keywordOf(sql, code[k - 1]) === 'DISTINCT') continue; // IS [NOT] DISTINCT FROM
      parseFromClause(k + 1);
    }
  }
  // FROM lists record later items before the subqueries nested between them.
  return refs.sort((a, b) => a.start - b.start);
}

/**
 * Replaces each reference for which `resolve` returns parts. The replacement
 * is rendered, with every part quoted when any original part was.
 */
export function rewriteTableRefs(
  sql: string,
  resolve: (ref: TableRef) => readonly string[] | undefined,
  refs: readonly TableRef[] = findTableRefs(sql),
): { sql: string; rewritten: TableRef[] } {
  const rewritten: TableRef[] = [];
  const out: string[] = [];
  let copied = 0;
  for (const ref of refs) {
    const parts = resolve(ref);
    if (parts === undefined) continue;
    out.push(sql.slice(copied, ref.start), renderName(parts, ref.quoted));
    copied = ref.end;
    rewritten.push(ref);
  }
  if (rewritten.length === 0) return { sql, rewritten };
  out.push(sql.slice(copied));
  return { sql: out.join(''), rewritten };
}
