/**
 * Typed access to the nunjucks internals the Jinja layer builds on. The public
 * API (and @types/nunjucks) stops at Environment/Template, but Jinja
 * compatibility needs the parser, the AST node classes, the transformer and the
 * Compiler class so that we can compile with our own Compiler subclass instead
 * of patching nunjucks' shared prototypes (which `installJinjaCompat()` does,
 * process-wide). Only the members actually used are declared.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** An AST node: `typename` names the class, `fields` lists child properties. */
export interface NjNode {
  readonly typename: string;
  readonly lineno: number;
  readonly colno: number;
  [field: string]: any;
  findAll(type: NjNodeClass, results?: NjNode[]): NjNode[];
  addChild(child: NjNode): void;
}

export interface NjNodeClass {
  new (lineno: number, colno: number, ...fields: unknown[]): NjNode;
  extend(name: string, props: { fields: string[] }): NjNodeClass;
}

export interface NjNodes {
  Node: NjNodeClass;
  NodeList: NjNodeClass;
  Symbol: NjNodeClass;
  LookupVal: NjNodeClass;
  InlineIf: NjNodeClass;
  Array: NjNodeClass;
  Literal: NjNodeClass;
  FunCall: NjNodeClass;
  Group: NjNodeClass;
  Dict: NjNodeClass;
  Pair: NjNodeClass;
  KeywordArgs: NjNodeClass;
  Macro: NjNodeClass;
  Root: NjNodeClass;
  Set: NjNodeClass;
}

/** The compile-time frame: maps template variable names to generated JS ids. */
export interface NjFrame {
  push(isolateWrites?: boolean): NjFrame;
  set(name: string, id: string): void;
  lookup(name: string): string | undefined;
}

/** The subset of nunjucks' Compiler the subclass calls or overrides. */
export interface NjCompiler {
  compile(node: NjNode, frame: NjFrame): void;
  _compileExpression(node: NjNode, frame: NjFrame): void;
  _emit(code: string): void;
  _emitLine(code: string): void;
  _tmpid(): string;
  fail(message: string, lineno?: number, colno?: number): never;
  getCode(): string;
  compileSet(node: NjNode, frame: NjFrame): void;
  compileFor(node: NjNode, frame: NjFrame): void;
  _compileMacro(node: NjNode, frame: NjFrame | undefined): string;
  compileLiteral(node: NjNode, frame: NjFrame): void;
  compilePair(node: NjNode, frame: NjFrame): void;
}

export type NjCompilerClass = (new (templateName: string, throwOnUndefined: boolean) => NjCompiler) & {
  prototype: NjCompiler;
};

export interface NjToken {
  readonly type: string;
  readonly value: string;
  readonly lineno: number;
  readonly colno: number;
}

/** nunjucks' Parser, as extensions and the JinjaParser subclass use it. */
export interface NjParser {
  extensions: readonly NjExtension[];
  nextToken(): NjToken;
  peekToken(): NjToken | null;
  skip(type: string): boolean;
  fail(message: string, lineno?: number, colno?: number): never;
  parseExpression(): NjNode;
  parseSignature(tolerant?: boolean, noParens?: boolean): NjNode;
  parsePostfix(node: NjNode): NjNode;
  advanceAfterBlockEnd(name?: string): void;
  parseUntilBlocks(...names: string[]): NjNode;
  parseAggregate(): NjNode | null;
  skipValue(type: string, value: string): boolean;
  parseAsRoot(): NjNode;
}

export type NjParserClass = (new (tokens: unknown) => NjParser) & { prototype: NjParser };

export interface NjExtension {
  readonly tags: readonly string[];
  parse(parser: NjParser, nodes: NjNodes): NjNode;
}

/** A nunjucks TemplateError: `cause` is set when it wraps an error thrown while rendering. */
export interface NjTemplateError extends Error {
  readonly lineno?: number;
  readonly colno?: number;
  readonly cause?: unknown;
}

export interface NjLexer {
  lex(src: string, opts: object): unknown;
  TOKEN_LEFT_PAREN: string;
  TOKEN_RIGHT_PAREN: string;
  TOKEN_LEFT_BRACKET: string;
  TOKEN_RIGHT_BRACKET: string;
  TOKEN_LEFT_CURLY: string;
  TOKEN_RIGHT_CURLY: string;
  TOKEN_COMMA: string;
  TOKEN_BLOCK_END: string;
  TOKEN_COLON: string;
  TOKEN_OPERATOR: string;
  TOKEN_SYMBOL: string;
}

/** nunjucks itself and the internals the Jinja layer builds on. */
export interface Nunjucks {
  readonly lib: typeof import('nunjucks');
  readonly nodes: NjNodes;
  readonly Parser: NjParserClass;
  readonly lexer: NjLexer;
  readonly transformer: { transform(ast: NjNode, asyncFilters: readonly string[], name: string): NjNode };
  readonly Compiler: NjCompilerClass;
  /** The runtime's Frame: also the compile-time scope of a macro compiled without an enclosing frame. */
  readonly Frame: new () => NjFrame;
}

let loaded: Nunjucks | undefined;

/**
 * nunjucks, loaded on first use: a compile whose models all come from the
 * compile cache (or render on the ref-only fast path) never loads its 24
 * modules.
 */
export function nunjucksInternals(): Nunjucks {
  loaded ??= {
    lib: require('nunjucks') as typeof import('nunjucks'),
    nodes: require('nunjucks/src/nodes.js') as NjNodes,
    Parser: (require('nunjucks/src/parser.js') as { Parser: NjParserClass }).Parser,
    lexer: require('nunjucks/src/lexer.js') as NjLexer,
    transformer: require('nunjucks/src/transformer.js') as Nunjucks['transformer'],
    Compiler: (require('nunjucks/src/compiler.js') as { Compiler: NjCompilerClass }).Compiler,
    Frame: (require('nunjucks/src/runtime.js') as { Frame: new () => NjFrame }).Frame,
  };
  return loaded;
}
