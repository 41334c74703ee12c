// The template layer subclasses nunjucks' private parser and compiler
// (engine/template/nunjucks-internals.ts, jinja-parser.ts, jinja-compiler.ts,
// jinja-macro.ts). package.json pins nunjucks to one exact version; this test
// fails first if an upgrade changes the shape of what we reach into.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { nunjucksInternals } from '../engine/template/nunjucks-internals.js';

const require = createRequire(import.meta.url);

test('nunjucks is pinned to an exact version, and that version is installed', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
  const pinned = pkg.dependencies['nunjucks']!;
  assert.match(pinned, /^\d+\.\d+\.\d+$/, 'nunjucks must be pinned to one version: the template layer uses its internals');
  const installed = (require('nunjucks/package.json') as { version: string }).version;
  assert.equal(installed, pinned);
});

function assertMethods(proto: object, names: readonly string[], what: string): void {
  for (const name of names) assert.equal(typeof (proto as Record<string, unknown>)[name], 'function', `${what}.${name}`);
}

test('the parser, lexer and compiler members the template layer uses exist', () => {
  const nj = nunjucksInternals();
  assertMethods(nj.Parser.prototype, [
    'nextToken', 'peekToken', 'pushToken', 'skip', 'skipValue', 'fail', 'parseExpression', 'parseSignature', 'parsePostfix',
    'parseAggregate', 'parsePrimary', 'parseUntilBlocks', 'advanceAfterBlockEnd', 'parseAsRoot',
  ], 'Parser');
  assertMethods(nj.Compiler.prototype, [
    'compile', '_compileExpression', '_compileAggregate', '_emit', '_emitLine', '_emitLines', '_tmpid', 'fail', 'getCode',
    '_pushBuffer', '_popBuffer', '_withScopedSyntax', '_getNodeName', '_compileMacro', 'assertType',
    'compileSet', 'compileFor', 'compileIf', 'compileInlineIf', 'compileLiteral', 'compilePair', 'compileDict',
    'compileKeywordArgs', 'compileFunCall', 'compileOutput', 'compileMacro', 'compileCaller',
  ], 'Compiler');
  const tokens = nj.lexer.lex("{{ 'a' }}", {}) as unknown as Record<string, unknown>;
  assertMethods(tokens, ['nextToken', '_parseString', 'current', 'forward', 'isFinished'], 'Tokenizer');
  for (const t of ['TOKEN_LEFT_PAREN', 'TOKEN_RIGHT_PAREN', 'TOKEN_LEFT_BRACKET', 'TOKEN_RIGHT_BRACKET', 'TOKEN_LEFT_CURLY', 'TOKEN_RIGHT_CURLY', 'TOKEN_COMMA', 'TOKEN_COLON', 'TOKEN_OPERATOR', 'TOKEN_SYMBOL', 'TOKEN_BLOCK_END'] as const) {
    assert.equal(typeof nj.lexer[t], 'string', `lexer.${t}`);
  }
  assert.equal(typeof nj.transformer.transform, 'function');
  const frame = new nj.Frame();
  assertMethods(frame, ['push', 'set', 'lookup', 'pop'], 'Frame');
  const runtime = nj.lib.runtime as unknown as Record<string, unknown>;
  assertMethods(runtime, ['callWrap', 'contextOrFrameLookup', 'makeKeywordArgs', 'SafeString', 'Frame', 'handleError'], 'runtime');
});

test('the AST node classes have the fields the template layer reads', () => {
  const { nodes } = nunjucksInternals();
  const fields: Record<string, readonly string[]> = {
    Macro: ['name', 'args', 'body'],
    Pair: ['key', 'value'],
    FunCall: ['name', 'args'],
    LookupVal: ['target', 'val'],
    InlineIf: ['cond', 'body', 'else_'],
    Dict: ['children'],
    KeywordArgs: ['children'],
    Group: ['children'],
    Array: ['children'],
    NodeList: ['children'],
    Symbol: ['value'],
    Literal: ['value'],
  };
  for (const [name, expected] of Object.entries(fields)) {
    const cls = (nodes as unknown as Record<string, { prototype: { fields: string[] } }>)[name];
    assert.ok(cls !== undefined, `nodes.${name}`);
    for (const f of expected) assert.ok(cls.prototype.fields.includes(f), `nodes.${name} has field ${f}`);
  }
  // KeywordArgs must stay a Dict (the macro compiler tells defaults by `instanceof Dict`).
  assert.ok(new nodes.KeywordArgs(0, 0) instanceof nodes.Dict);
  const root = new nodes.NodeList(0, 0, [new nodes.Symbol(0, 0, 'x')]);
  assert.equal(root.findAll(nodes.Symbol).length, 1);
});
