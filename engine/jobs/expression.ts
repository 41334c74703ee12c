/**
 * Pipeline expressions: `if`, `check`, `loop` and `{…}`
 * templates are parsed into a syntax tree that the pipeline runner
 * interprets — never eval, Function or vm. Validation at save time and the
 * runner use this one parser, so a file that saved is a file that parses.
 *
 * Grammar (precedence low → high): or, and, not, comparison (non-chaining),
 * sum, product, unary minus, postfix (`.name`, `[expr]`), primary.
 */
import { EngineError } from '../errors.js';

export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';

export type Expr =
  | { readonly type: 'literal'; readonly value: string | number | boolean | null; readonly offset: number }
  | { readonly type: 'list'; readonly items: readonly Expr[]; readonly offset: number }
  | { readonly type: 'name'; readonly name: string; readonly offset: number }
  | { readonly type: 'member'; readonly object: Expr; readonly property: string; readonly offset: number }
  | { readonly type: 'index'; readonly object: Expr; readonly index: Expr; readonly offset: number }
  | { readonly type: 'call'; readonly callee: string; readonly args: readonly Expr[]; readonly offset: number }
  | { readonly type: 'unary'; readonly op: '-' | '!'; readonly operand: Expr; readonly offset: number }
  | { readonly type: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr; readonly offset: number };

export const EXPRESSION_SCOPES: readonly string[] = ['env', 'store', 'state', 'loop', 'timestamp', 'execution'];

export const EXPRESSION_FUNCTIONS: readonly string[] = [
  'contains', 'length', 'upper', 'lower', 'trim', 'replace', 'split', 'split_part',
  'join', 'coalesce', 'keys', 'int', 'float', 'string', 'json', 'now',
];

export const MAX_EXPRESSION_LENGTH = 4096;
export const MAX_EXPRESSION_DEPTH = 64;

const FORBIDDEN_NAMES = new Set(['__proto__', 'prototype', 'constructor']);
const FUNCTIONS = new Set(EXPRESSION_FUNCTIONS);

/**
 * A syntax error (`invalid expression: <detail> at <offset>`, offset 0-based
 * in the expression text) or an unknown function (`unknown function "<f>"`).
 */
export class ExpressionError extends EngineError {
  constructor(
    readonly reason: 'syntax' | 'function',
    readonly detail: string,
    readonly offset: number,
  ) {
    super('config', reason === 'function' ? `unknown function ${JSON.stringify(detail)}` : `invalid expression: ${detail} at ${offset}`);
    this.name = 'ExpressionError';
  }
}

type TokKind = 'num' | 'str' | 'name' | 'op' | 'end';
interface Tok {
  readonly kind: TokKind;
  readonly text: string;
  readonly value?: string | number;
  readonly offset: number;
}

const OPERATORS = ['||', '&&', '==', '!=', '<=', '>=', '<', '>', '!', '+', '-', '*', '/', '%', '.', '[', ']', '(', ')', ','];
const NUMBER = /\d+(?:\.\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r' };

function syntax(detail: string, offset: number): never {
  throw new ExpressionError('syntax', detail, offset);
}

function readString(src: string, start: number): Tok {
  const q = src[start]!;
  let out = '';
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i]!;
    if (c === q) return { kind: 'str', text: src.slice(start, i + 1), value: out, offset: start };
    if (c === '\\' && i + 1 < src.length) {
      const n = src[++i]!;
      out += ESCAPES[n] ?? n;
    } else out += c;
  }
  return syntax('unterminated string', start);
}

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    NAME.lastIndex = i;
    const num = NUMBER.exec(src);
    const name = num ? null : NAME.exec(src);
    let tok: Tok;
    if (num) tok = { kind: 'num', text: num[0], value: Number(num[0]), offset: i };
    else if (name) tok = { kind: 'name', text: name[0], offset: i };
    else if (c === "'" || c === '"') tok = readString(src, i);
    else {
      const op = OPERATORS.find((o) => src.startsWith(o, i));
      if (op === undefined) syntax(`unexpected character ${JSON.stringify(c)}`, i);
      tok = { kind: 'op', text: op, offset: i };
    }
    toks.push(tok);
    i += tok.text.length;
  }
  toks.push({ kind: 'end', text: '', offset: src.length });
  return toks;
}

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly toks: readonly Tok[]) {}

  private peek(): Tok {
    return this.toks[this.pos]!;
  }

  private next(): Tok {
    return this.toks[this.pos++]!;
  }

  private isOp(text: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === text;
  }

  private isWord(...words: string[]): boolean {
    const t = this.peek();
    return t.kind === 'name' && words.includes(t.text);
  }

  private unexpected(t: Tok): never {
    return t.kind === 'end' ? syntax('unexpected end of expression', t.offset) : syntax(`unexpected token ${JSON.stringify(t.text)}`, t.offset);
  }

  private expect(text: string): void {
    if (!this.isOp(text)) this.unexpected(this.peek());
    this.pos++;
  }

  /** Runs a nested parse one level deeper, enforcing the depth limit. */
  private nested<T>(offset: number, f: () => T): T {
    if (++this.depth > MAX_EXPRESSION_DEPTH) syntax(`nesting deeper than ${MAX_EXPRESSION_DEPTH}`, offset);
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  parseAll(): Expr {
    const e = this.expr();
    const t = this.peek();
    if (t.kind !== 'end') this.unexpected(t);
    return e;
  }

  private expr(): Expr {
    return this.nested(this.peek().offset, () => this.or());
  }

  private binaryLevel(ops: readonly string[], words: readonly string[], canon: BinaryOp | undefined, sub: () => Expr): Expr {
    let left = sub();
    for (;;) {
      const t = this.peek();
      const hit = (t.kind === 'op' && ops.includes(t.text)) || (t.kind === 'name' && words.includes(t.text));
      if (!hit) return left;
      this.pos++;
      const right = sub();
      left = { type: 'binary', op: canon ?? (t.text as BinaryOp), left, right, offset: t.offset };
    }
  }

  private or(): Expr {
    return this.binaryLevel(['||'], ['or'], '||', () => this.and());
  }

  private and(): Expr {
    return this.binaryLevel(['&&'], ['and'], '&&', () => this.not());
  }

  private not(): Expr {
    const t = this.peek();
    if (this.isOp('!') || this.isWord('not')) {
      this.pos++;
      return { type: 'unary', op: '!', operand: this.nested(t.offset, () => this.not()), offset: t.offset };
    }
    return this.cmp();
  }

  private cmp(): Expr {
    const left = this.sum();
    const t = this.peek();
    if (t.kind === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.text)) {
      this.pos++;
      return { type: 'binary', op: t.text as BinaryOp, left, right: this.sum(), offset: t.offset };
    }
    return left;
  }

  private sum(): Expr {
    return this.binaryLevel(['+', '-'], [], undefined, () => this.prod());
  }

  private prod(): Expr {
    return this.binaryLevel(['*', '/', '%'], [], undefined, () => this.unary());
  }

  private unary(): Expr {
    const t = this.peek();
    if (this.isOp('-')) {
      this.pos++;
      return { type: 'unary', op: '-', operand: this.nested(t.offset, () => this.unary()), offset: t.offset };
    }
    return this.postfix();
  }

  private postfix(): Expr {
    let e = this.primary();
    for (;;) {
      const t = this.peek();
      if (this.isOp('.')) {
        this.pos++;
        const n = this.next();
        if (n.kind !== 'name') this.unexpected(n);
        checkName(n);
        if (this.isOp('(')) syntax('methods are not supported', this.peek().offset);
        e = { type: 'member', object: e, property: n.text, offset: t.offset };
      } else if (this.isOp('[')) {
        this.pos++;
        const index = this.expr();
        this.expect(']');
        e = { type: 'index', object: e, index, offset: t.offset };
      } else return e;
    }
  }

  private list(close: string): Expr[] {
    const items: Expr[] = [];
    if (this.isOp(close)) {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(this.expr());
      if (this.isOp(',')) this.pos++;
      else break;
    }
    this.expect(close);
    return items;
  }

  private primary(): Expr {
    const t = this.next();
    if (t.kind === 'num' || t.kind === 'str') return { type: 'literal', value: t.value!, offset: t.offset };
    if (t.kind === 'name') {
      if (t.text === 'true' || t.text === 'false') return { type: 'literal', value: t.text === 'true', offset: t.offset };
      if (t.text === 'null') return { type: 'literal', value: null, offset: t.offset };
      if (['and', 'or', 'not'].includes(t.text)) this.unexpected(t);
      checkName(t);
      if (this.isOp('(')) {
        this.pos++;
        if (!FUNCTIONS.has(t.text)) throw new ExpressionError('function', t.text, t.offset);
        return { type: 'call', callee: t.text, args: this.list(')'), offset: t.offset };
      }
      return { type: 'name', name: t.text, offset: t.offset };
    }
    if (t.kind === 'op' && t.text === '(') {
      const e = this.expr();
      this.expect(')');
      return e;
    }
    if (t.kind === 'op' && t.text === '[') return { type: 'list', items: this.list(']'), offset: t.offset };
    return this.unexpected(t);
  }
}

function checkName(t: Tok): void {
  if (FORBIDDEN_NAMES.has(t.text)) syntax(`name ${JSON.stringify(t.text)} is not allowed`, t.offset);
}

/** Parses one expression; throws ExpressionError. */
export function parseExpression(src: string): Expr {
  if (src.length > MAX_EXPRESSION_LENGTH) syntax(`longer than ${MAX_EXPRESSION_LENGTH} characters`, MAX_EXPRESSION_LENGTH);
  return new Parser(tokenize(src)).parseAll();
}
