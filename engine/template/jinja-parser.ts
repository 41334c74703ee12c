/**
 * Parsing Jinja with nunjucks' parser plus what it lacks for Jinja2 as dbt
 * uses it: the `{% do expr %}` and `{% test %}` tags, Python slices
 * (`cols[1:]`, `xs[::-1]`), `*args` / `**kwargs` in calls, trailing commas in
 * calls, lists, dicts and tuples (`(a,)` is a one-item tuple), dict keys
 * that are expressions (`{col.name: col}`, `{k | lower: v}`) and string
 * literals read as Python reads them (py-string.ts). nunjucks would need its
 * shared Parser prototype patched for the whole process; a subclass keeps the
 * change to our templates. The classes are made on first use, when nunjucks
 * is loaded (nunjucks-internals.ts).
 */
import { nunjucksInternals, type NjExtension, type NjNode, type NjNodeClass, type NjParser, type NjParserClass } from './nunjucks-internals.js';
import { readPyString, type StringTokenizer } from './py-string.js';

interface ParserKit {
  /** Node kinds the parser adds: compiled by jinja-compiler.ts. */
  readonly DoNode: NjNodeClass;
  readonly SliceNode: NjNodeClass;
  /** `*expr` among a call's positional arguments. */
  readonly StarArg: NjNodeClass;
  /** `**expr` among a call's keyword arguments. */
  readonly DoubleStarArg: NjNodeClass;
  readonly parse: (source: string) => NjNode;
}

let kit: ParserKit | undefined;

function makeKit(): ParserKit {
  const { nodes: njNodes, lexer: njLexer } = nunjucksInternals();
  const DoNode = njNodes.Node.extend('Do', { fields: ['expr'] });
  const SliceNode = njNodes.Node.extend('Slice', { fields: ['start', 'stop', 'step'] });
  const StarArg = njNodes.Node.extend('StarArg', { fields: ['expr'] });
  const DoubleStarArg = njNodes.Node.extend('DoubleStarArg', { fields: ['expr'] });

  const extensions = tagExtensions(DoNode);
  const JinjaParser = parserClass(SliceNode, StarArg, DoubleStarArg);

  const parse = (source: string): NjNode => {
    const tokens = njLexer.lex(source, { trimBlocks: false, lstripBlocks: false }) as StringTokenizer & { _parseString?: (q: string) => string };
    // On this tokenizer only: nunjucks' shared Tokenizer prototype stays as it is.
    tokens._parseString = function (this: StringTokenizer, quote: string) {
      return readPyString(this, quote);
    };
    const parser: NjParser = new JinjaParser(tokens);
    parser.extensions = extensions;
    return parser.parseAsRoot();
  };
  return { DoNode, SliceNode, StarArg, DoubleStarArg, parse };
}

/** The parser's node kinds and entry, made on first use. */
export function jinjaParser(): ParserKit {
  return (kit ??= makeKit());
}

/** Parses `source` into nunjucks' AST; throws nunjucks' TemplateError (with `lineno`/`colno`) on a syntax error. */
export function parseJinja(source: string): NjNode {
  return jinjaParser().parse(source);
}


/** The tags nunjucks lacks: `{% do expr %}` and dbt's `{% test %}`. */
function tagExtensions(DoNode: NjNodeClass): NjExtension[] {
  const { nodes: njNodes, lexer: T } = nunjucksInternals();
  const doExtension: NjExtension = {
    tags: ['do'],
    parse(parser) {
      const tok = parser.nextToken();
      const expr = parser.parseExpression();
      parser.advanceAfterBlockEnd(tok.value);
      return new DoNode(tok.lineno, tok.colno, expr);
    },
  };

  /** dbt's `{% test name(args) %}…{% endtest %}`: the macro `test_<name>`, as dbt defines it. */
  const testExtension: NjExtension = {
    tags: ['test'],
    parse(parser) {
      const tok = parser.nextToken();
      const name = parser.nextToken();
      if (name.type !== T.TOKEN_SYMBOL) parser.fail(`expected a test name, got ${name.value}`, name.lineno, name.colno);
      const args = parser.parseSignature();
      parser.advanceAfterBlockEnd(tok.value);
      const body = parser.parseUntilBlocks('endtest');
      parser.advanceAfterBlockEnd();
      const node = new njNodes.Macro(tok.lineno, tok.colno, new njNodes.Symbol(name.lineno, name.colno, `test_${name.value}`), args);
      node.body = body;
      return node;
    },
  };
  return [doExtension, testExtension];
}

/** nunjucks' Parser with Python's call, aggregate and subscript syntax. */
function parserClass(SliceNode: NjNodeClass, StarArg: NjNodeClass, DoubleStarArg: NjNodeClass): NjParserClass {
  const { nodes: njNodes, lexer: T, Parser: NjBaseParser } = nunjucksInternals();
  const njLexer = T;
  return class JinjaParser extends NjBaseParser {
    /**
     * A call's or macro's arguments: nunjucks' parseSignature plus a trailing
     * comma, `*expr` (positional) and `**expr` (keyword) unpacking.
     */
    override parseSignature(tolerant?: boolean, noParens?: boolean): NjNode {
      let tok = this.peekToken()!;
      if (!noParens && tok.type !== T.TOKEN_LEFT_PAREN) {
        if (tolerant) return null as unknown as NjNode;
        this.fail('expected arguments', tok.lineno, tok.colno);
      }
      if (tok.type === T.TOKEN_LEFT_PAREN) tok = this.nextToken();
      const args = new njNodes.NodeList(tok.lineno, tok.colno);
      const kwargs = new njNodes.KeywordArgs(tok.lineno, tok.colno);
      for (let first = true; ; first = false) {
        tok = this.peekToken()!;
        if (!noParens && tok.type === T.TOKEN_RIGHT_PAREN) {
          this.nextToken();
          break;
        }
        if (noParens && tok.type === T.TOKEN_BLOCK_END) break;
        if (!first) {
          if (!this.skip(T.TOKEN_COMMA)) this.fail('expected comma after expression', tok.lineno, tok.colno);
          const next = this.peekToken()!;
          if ((!noParens && next.type === T.TOKEN_RIGHT_PAREN) || (noParens && next.type === T.TOKEN_BLOCK_END)) continue;
        }
        const star = this.peekToken()!;
        if (star.type === T.TOKEN_OPERATOR && (star.value === '*' || star.value === '**')) {
          this.nextToken();
          const expr = this.parseExpression();
          if (star.value === '*') args.addChild(new StarArg(star.lineno, star.colno, expr));
          else kwargs.addChild(new DoubleStarArg(star.lineno, star.colno, expr));
          continue;
        }
        const arg = this.parseExpression();
        if (this.skipValue(T.TOKEN_OPERATOR, '=')) kwargs.addChild(new njNodes.Pair(arg.lineno, arg.colno, arg, this.parseExpression()));
        else args.addChild(arg);
      }
      if (kwargs.children.length > 0) args.addChild(kwargs);
      return args;
    }

    /** `( … )`, `[ … ]`, `{ … }` with trailing commas and expression dict keys; `(a,)` is a tuple (a list here). */
    override parseAggregate(): NjNode | null {
      const tok = this.nextToken();
      const close = { [T.TOKEN_LEFT_PAREN]: T.TOKEN_RIGHT_PAREN, [T.TOKEN_LEFT_BRACKET]: T.TOKEN_RIGHT_BRACKET, [T.TOKEN_LEFT_CURLY]: T.TOKEN_RIGHT_CURLY }[tok.type];
      if (close === undefined) return null;
      const kind = tok.type === T.TOKEN_LEFT_PAREN ? njNodes.Group : tok.type === T.TOKEN_LEFT_BRACKET ? njNodes.Array : njNodes.Dict;
      const node = new kind(tok.lineno, tok.colno);
      let trailingComma = false;
      for (;;) {
        if (this.skip(close)) break;
        if (node.children.length > 0 && !trailingComma) this.fail('expected comma after expression', tok.lineno, tok.colno);
        if (kind === njNodes.Dict) {
          const key = this.parseExpression();
          if (!this.skip(T.TOKEN_COLON)) this.fail('expected colon after dict key', key.lineno, key.colno);
          node.addChild(new njNodes.Pair(key.lineno, key.colno, key, this.parseExpression()));
        } else {
          node.addChild(this.parseExpression());
        }
        trailingComma = this.skip(T.TOKEN_COMMA);
      }
      if (kind === njNodes.Group && trailingComma) return new njNodes.Array(tok.lineno, tok.colno, node.children);
      return node;
    }

    /** nunjucks' parsePostfix (calls, `.name`, `[index]`) with `[start:stop:step]` slices added. */
    override parsePostfix(target: NjNode): NjNode {
      let node = target;
      for (let tok = this.peekToken(); tok !== null; tok = this.peekToken()) {
        if (tok.type === njLexer.TOKEN_LEFT_PAREN) {
          node = new njNodes.FunCall(tok.lineno, tok.colno, node, this.parseSignature());
        } else if (tok.type === njLexer.TOKEN_LEFT_BRACKET) {
          node = new njNodes.LookupVal(tok.lineno, tok.colno, node, this.parseSubscript());
        } else if (tok.type === njLexer.TOKEN_OPERATOR && tok.value === '.') {
          this.nextToken();
          const name = this.nextToken();
          if (name.type !== njLexer.TOKEN_SYMBOL) this.fail(`expected name as lookup value, got ${name.value}`, name.lineno, name.colno);
          node = new njNodes.LookupVal(tok.lineno, tok.colno, node, new njNodes.Literal(name.lineno, name.colno, name.value));
        } else {
          break;
        }
      }
      return node;
    }

    /** `[expr]` → the index expression; `[a:b:c]` (any part optional) → a Slice node. */
    private parseSubscript(): NjNode {
      const open = this.nextToken();
      const parts: (NjNode | null)[] = [null, null, null];
      let part = 0;
      while (!this.skip(njLexer.TOKEN_RIGHT_BRACKET)) {
        if (this.skip(njLexer.TOKEN_COLON)) {
          if (++part > 2) this.fail('too many slice components', open.lineno, open.colno);
        } else if (parts[part] !== null) {
          this.fail('expected ] or : in subscript', open.lineno, open.colno);
        } else {
          parts[part] = this.parseExpression();
        }
      }
      if (part === 0) {
        if (parts[0] === null) this.fail('empty subscript', open.lineno, open.colno);
        return parts[0];
      }
      return new SliceNode(open.lineno, open.colno, ...parts);
    }
    };
}
