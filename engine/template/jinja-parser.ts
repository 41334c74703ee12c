/**
 * Parsing Jinja with nunjucks' parser plus what it lacks: the `{% do expr %}`
 * tag and Python slices (`cols[1:]`, `name[:10]`, `xs[::-1]`), which nunjucks
 * rejects unless `installJinjaCompat()` patches its shared Parser prototype for
 * the whole process. A subclass keeps the change to our templates. The
 * classes are made on first use, when nunjucks is loaded (nunjucks-internals.ts).
 */
import { nunjucksInternals, type NjExtension, type NjNode, type NjNodeClass, type NjParser } from './nunjucks-internals.js';

interface ParserKit {
  /** Node kinds the parser adds: compiled by jinja-compiler.ts. */
  readonly DoNode: NjNodeClass;
  readonly SliceNode: NjNodeClass;
  readonly parse: (source: string) => NjNode;
}

let kit: ParserKit | undefined;

function makeKit(): ParserKit {
  const { nodes: njNodes, lexer: njLexer, Parser: NjBaseParser } = nunjucksInternals();
  const DoNode = njNodes.Node.extend('Do', { fields: ['expr'] });
  const SliceNode = njNodes.Node.extend('Slice', { fields: ['start', 'stop', 'step'] });

  const doExtension: NjExtension = {
    tags: ['do'],
    parse(parser) {
      const tok = parser.nextToken();
      const expr = parser.parseExpression();
      parser.advanceAfterBlockEnd(tok.value);
      return new DoNode(tok.lineno, tok.colno, expr);
    },
  };

  class JinjaParser extends NjBaseParser {
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
  }

  const parse = (source: string): NjNode => {
    const parser: NjParser = new JinjaParser(njLexer.lex(source, { trimBlocks: false, lstripBlocks: false }));
    parser.extensions = [doExtension];
    return parser.parseAsRoot();
  };
  return { DoNode, SliceNode, parse };
}

/** The parser's node kinds and entry, made on first use. */
export function jinjaParser(): ParserKit {
  return (kit ??= makeKit());
}

/** Parses `source` into nunjucks' AST; throws nunjucks' TemplateError (with `lineno`/`colno`) on a syntax error. */
export function parseJinja(source: string): NjNode {
  return jinjaParser().parse(source);
}
