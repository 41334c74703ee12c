// Pipeline expressions and templates: the grammar's
// precedence as trees, every syntax error with its offset, the rejected
// names, the length and depth limits, and which brace text is a template.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.js';
import { ExpressionError, parseExpression, type Expr } from '../engine/jobs/expression.js';
import { hasTemplate, templateParts } from '../engine/jobs/template.js';

/** A compact Lisp-like rendering of a tree, to compare shapes. */
function show(e: Expr): string {
  switch (e.type) {
    case 'literal': return JSON.stringify(e.value);
    case 'list': return `[${e.items.map(show).join(' ')}]`;
    case 'name': return e.name;
    case 'member': return `${show(e.object)}.${e.property}`;
    case 'index': return `${show(e.object)}[${show(e.index)}]`;
    case 'call': return `${e.callee}(${e.args.map(show).join(' ')})`;
    case 'unary': return `(${e.op} ${show(e.operand)})`;
    case 'binary': return `(${e.op} ${show(e.left)} ${show(e.right)})`;
  }
}

const tree = (src: string): string => show(parseExpression(src));

function fails(src: string, message: string): void {
  assert.throws(() => parseExpression(src), (err: unknown) => {
    assert.ok(err instanceof ExpressionError);
    assert.ok(err instanceof EngineError);
    assert.equal(err.message, message);
    return true;
  }, src);
}

test('precedence: or < and < not < comparison < sum < product < unary minus < postfix', () => {
  assert.equal(tree('a || b && c'), '(|| a (&& b c))');
  assert.equal(tree('a or b and not c'), '(|| a (&& b (! c)))');
  assert.equal(tree('not a == b'), '(! (== a b))');
  assert.equal(tree('!a && b'), '(&& (! a) b)');
  assert.equal(tree('1 + 2 * 3 - 4 % 5'), '(- (+ 1 (* 2 3)) (% 4 5))');
  assert.equal(tree('-a.b * 2'), '(* (- a.b) 2)');
  assert.equal(tree('(1 + 2) * 3'), '(* (+ 1 2) 3)');
});

test('comparisons do not chain', () => {
  fails('1 == 2 == 3', 'invalid expression: unexpected token "==" at 7');
  assert.equal(tree('state.transform.failed == 0'), '(== state.transform.failed 0)');
  assert.equal(tree('a <= b'), '(<= a b)');
  assert.equal(tree('a >= b'), '(>= a b)');
  assert.equal(tree('a != b'), '(!= a b)');
});

test('primaries: numbers, strings with escapes, true/false/null, lists, names, calls', () => {
  assert.equal(tree('12.5'), '12.5');
  assert.equal(tree("'it\\'s'"), '"it\'s"');
  assert.equal(tree('"a\\nb"'), '"a\\nb"');
  assert.equal(tree('[1, "x", null, [true, false]]'), '[1 "x" null [true false]]');
  assert.equal(tree('[]'), '[]');
  assert.equal(tree('coalesce(env.X, "d")'), 'coalesce(env.X "d")');
  assert.equal(tree('now()'), 'now()');
  assert.equal(tree("split_part(loop.value, '.', 2)"), 'split_part(loop.value "." 2)');
});

test('postfix: members and indexes chain', () => {
  assert.equal(tree('state.load.rows'), 'state.load.rows');
  assert.equal(tree("state['load'].tasks[0].rows"), 'state["load"].tasks[0].rows');
  assert.equal(tree('loop.index + 1'), '(+ loop.index 1)');
});

test('every known function parses; an unknown one is reported by name', () => {
  for (const f of ['contains', 'length', 'upper', 'lower', 'trim', 'replace', 'split', 'split_part', 'join', 'coalesce', 'keys', 'int', 'float', 'string', 'json', 'now']) {
    assert.equal(parseExpression(`${f}(1)`).type, 'call', f);
  }
  fails('eval("1")', 'unknown function "eval"');
  fails('1 + process(2)', 'unknown function "process"');
});

test('syntax errors carry a detail and a 0-based offset', () => {
  fails('', 'invalid expression: unexpected end of expression at 0');
  fails('state.', 'invalid expression: unexpected end of expression at 6');
  fails('1 +', 'invalid expression: unexpected end of expression at 3');
  fails('a = b', 'invalid expression: unexpected character "=" at 2');
  fails("'abc", 'invalid expression: unterminated string at 0');
  fails('(1 + 2', 'invalid expression: unexpected end of expression at 6');
  fails('a b', 'invalid expression: unexpected token "b" at 2');
  fails('[1, 2', 'invalid expression: unexpected end of expression at 5');
  fails('a.1', 'invalid expression: unexpected token "1" at 2');
  fails('and', 'invalid expression: unexpected token "and" at 0');
  fails('x; y', 'invalid expression: unexpected character ";" at 1');
});

test('no methods, no assignment, no prototype names', () => {
  fails('loop.value.toUpperCase()', 'invalid expression: methods are not supported at 22');
  fails('a = 1', 'invalid expression: unexpected character "=" at 2');
  fails('__proto__', 'invalid expression: name "__proto__" is not allowed at 0');
  fails('state.constructor', 'invalid expression: name "constructor" is not allowed at 6');
  fails('env.prototype.x', 'invalid expression: name "prototype" is not allowed at 4');
  assert.equal(tree("state['constructor']"), 'state["constructor"]', 'index keys are data; the evaluator guards them');
});

test('limits: 4096 characters, nesting depth 64', () => {
  const long = `${'1 + '.repeat(1023)}1234`;
  assert.equal(long.length, 4096);
  assert.equal(parseExpression(long).type, 'binary');
  fails(`${long}5`, 'invalid expression: longer than 4096 characters at 4096');
  const nest = (n: number): string => `${'('.repeat(n)}1${')'.repeat(n)}`;
  assert.equal(tree(nest(63)), '1');
  fails(nest(64), 'invalid expression: nesting deeper than 64 at 64');
  fails(`${'!'.repeat(80)}x`, 'invalid expression: nesting deeper than 64 at 63');
});

test('templates: brace text starting with a scope or a known function call is an expression', () => {
  assert.deepEqual(templateParts('analyze {loop.value}'), [
    { kind: 'text', text: 'analyze ' },
    { kind: 'expr', source: 'loop.value', offset: 9 },
  ]);
  assert.deepEqual(templateParts('{upper(env.X)}-{ state.a.rows }'), [
    { kind: 'expr', source: 'upper(env.X)', offset: 1 },
    { kind: 'text', text: '-' },
    { kind: 'expr', source: ' state.a.rows ', offset: 16 },
  ]);
  for (const scope of ['env', 'store', 'state', 'loop', 'timestamp', 'execution']) assert.equal(hasTemplate(`{${scope}.x}`), true, scope);
});

test('templates: other brace text (JSON, SQL, ${NAME}, unknown calls, near-miss names) stays literal', () => {
  for (const text of ['{"a": 1}', 'select {x}', '${NOTIFY_URL}', '{foo(1)}', '{environment}', '{loopy}', 'no braces', '{state', '{}']) {
    assert.deepEqual(templateParts(text), [{ kind: 'text', text }], text);
  }
  assert.deepEqual(templateParts('{"k": "{env.X}"}'), [
    { kind: 'text', text: '{"k": "' },
    { kind: 'expr', source: 'env.X', offset: 8 },
    { kind: 'text', text: '"}' },
  ]);
});

test('templates: a } inside a quoted string does not close the expression', () => {
  assert.deepEqual(templateParts("{coalesce(env.X, '}')}!"), [
    { kind: 'expr', source: "coalesce(env.X, '}')", offset: 1 },
    { kind: 'text', text: '!' },
  ]);
});
