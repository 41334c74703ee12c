// The pipeline expression interpreter and templates:
// every operator and function, scopes, null for missing keys, the falsy
// values, evaluation errors, the safety rules (no prototype access), the
// `${NAME}` layers and the timestamp scope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateSource, EvaluationError, truthy, toText, type EvalScope } from '../engine/pipeline/evaluate.js';
import { expressionText, renderDeep, renderText, renderTyped } from '../engine/pipeline/render.js';
import { pipelineVars, timestampScope } from '../engine/pipeline/scopes.js';

const scope = (roots: Record<string, unknown> = {}): EvalScope => ({
  roots: new Map(Object.entries({
    env: { NAME: 'ada', N: '3' },
    store: { count: 2, list: [1, 2, 3], obj: { a: 1, b: 'x' } },
    state: { load: { rows: 1520, tasks: [{ stream_name: 'public.users', rows: 3 }] }, transform: { failed: 0, ok_names: 'a,b' } },
    loop: { value: 'public.users', index: 1 },
    ...roots,
  })),
  now: () => new Date('2025-03-01T08:30:00.000Z'),
});

const ev = (src: string, s: EvalScope = scope()) => evaluateSource(src, s);
const fails = (src: string, re: RegExp, s: EvalScope = scope()) =>
  assert.throws(() => ev(src, s), (err: unknown) => err instanceof EvaluationError && re.test(err.message), src);

test('literals, lists and grouping', () => {
  assert.equal(ev('1'), 1);
  assert.equal(ev('2.5'), 2.5);
  assert.equal(ev("'a\\'b'"), "a'b");
  assert.equal(ev('"x"'), 'x');
  assert.equal(ev('true'), true);
  assert.equal(ev('null'), null);
  assert.deepEqual(ev('[1, "a", [true]]'), [1, 'a', [true]]);
  assert.deepEqual(ev('[]'), []);
  assert.equal(ev('(1 + 2) * 3'), 9);
  assert.equal(ev('1 + 2 * 3'), 7);
});

test('arithmetic: + concatenates with a string, numbers otherwise; - * / % and unary minus', () => {
  assert.equal(ev('1 + 2'), 3);
  assert.equal(ev("'n=' + 3"), 'n=3');
  assert.equal(ev("3 + 'x'"), '3x');
  assert.equal(ev("'a' + null"), 'a');
  assert.equal(ev('7 - 10'), -3);
  assert.equal(ev('6 * 7'), 42);
  assert.equal(ev('7 / 2'), 3.5);
  assert.equal(ev('7 % 3'), 1);
  assert.equal(ev('-store.count'), -2);
  assert.equal(ev('--2'), 2);
  fails('1 / 0', /division by zero/);
  fails('1 % 0', /division by zero/);
  fails('true + 1', /cannot add boolean and number/);
  fails('null + 1', /cannot add null and number/);
  fails("'a' - 1", /operator - needs numbers, got string/);
  fails('-"x"', /needs numbers/);
});

test('comparisons: deep equality, ordering of numbers or strings only', () => {
  assert.equal(ev('state.transform.failed == 0'), true);
  assert.equal(ev('1 == 1.0'), true);
  assert.equal(ev("1 == '1'"), false);
  assert.equal(ev("1 != '1'"), true);
  assert.equal(ev('[1, [2]] == [1, [2]]'), true);
  assert.equal(ev('store.obj == store.obj'), true);
  assert.equal(ev('state.missing == null'), true);
  assert.equal(ev('2 < 3'), true);
  assert.equal(ev('3 <= 3'), true);
  assert.equal(ev('2 > 3'), false);
  assert.equal(ev('3 >= 4'), false);
  assert.equal(ev("'abc' < 'abd'"), true);
  fails("1 < '2'", /cannot compare number and string with </);
  fails('null > 0', /cannot compare null and number/);
  fails('[1] >= [0]', /cannot compare list and list/);
});

test('logic: and/or/not in both spellings, short-circuit, booleans out', () => {
  assert.equal(ev('true && false'), false);
  assert.equal(ev('true and 1'), true);
  assert.equal(ev('false || 0'), false);
  assert.equal(ev("0 or 'x'"), true);
  assert.equal(ev('!true'), false);
  assert.equal(ev('not null'), true);
  assert.equal(ev('not not 1'), true);
  // Short-circuit: the right side would fail.
  assert.equal(ev('false and 1 / 0 == 1'), false);
  assert.equal(ev('true or 1 / 0 == 1'), true);
});

test('falsy: false, null, 0, "", [], {}; everything else truthy', () => {
  for (const v of [false, null, 0, '', [], {}, undefined]) assert.equal(truthy(v), false, JSON.stringify(v));
  for (const v of [true, 1, -1, 'a', [0], { a: null }]) assert.equal(truthy(v), true, JSON.stringify(v));
  assert.equal(ev('not []'), true);
  assert.equal(ev('not empty', scope({ empty: {} })), true);
  assert.equal(ev("not ''"), true);
  assert.equal(ev('not 0'), true);
});

test('scopes, members, indexes: a missing key yields null', () => {
  assert.equal(ev('env.NAME'), 'ada');
  assert.equal(ev('state.load.rows'), 1520);
  assert.equal(ev('state.load.tasks[0].stream_name'), 'public.users');
  assert.equal(ev("state['load']['rows']"), 1520);
  assert.equal(ev('store.list[2]'), 3);
  assert.equal(ev('store.list[3]'), null);
  assert.equal(ev('store.list[-1]'), null);
  assert.equal(ev("'abc'[1]"), 'b');
  assert.equal(ev('loop.value'), 'public.users');
  assert.equal(ev('loop.index'), 1);
  assert.equal(ev('state.nope.deeper.still'), null);
  assert.equal(ev('env.MISSING'), null);
  assert.equal(ev('unknown_scope.x'), null);
  assert.equal(ev('store.count.x'), null);
  assert.equal(ev('store.list.length'), null, 'no methods or properties of lists');
  assert.equal(ev('store[null]'), null);
  fails('store[true]', /cannot index with boolean/);
});

test('safety: __proto__, prototype and constructor are rejected; no prototype is reachable', () => {
  fails('state.__proto__', /name "__proto__" is not allowed/);
  fails('state.constructor', /name "constructor" is not allowed/);
  fails('store.obj.prototype', /name "prototype" is not allowed/);
  fails("state['__proto__']", /name "__proto__" is not allowed/);
  fails("store['constr' + 'uctor']", /name "constructor" is not allowed/);
  fails('constructor', /not allowed/);
  // Inherited keys are not own keys.
  assert.equal(ev("store['toString']"), null);
  assert.equal(ev("store.obj['hasOwnProperty']"), null);
  assert.equal(ev("keys(store.obj)[0]"), 'a');
  // No method calls, no unknown functions, nothing evaluated as code.
  fails("store.obj.valueOf()", /methods are not supported/);
  fails('eval("1")', /unknown function "eval"/);
  fails('Function("return 1")', /unknown function "Function"/);
  fails("json('{\"__proto__\": {\"x\": 1}}')", /key "__proto__" is not allowed/);
  assert.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype untouched');
});

test('functions: every function', () => {
  assert.equal(ev("contains('hello', 'ell')"), true);
  assert.equal(ev('contains(store.list, 2)'), true);
  assert.equal(ev('contains(store.list, 9)'), false);
  assert.equal(ev("contains(store.obj, 'a')"), true);
  assert.equal(ev("contains(store.obj, 'toString')"), false);
  assert.equal(ev("contains(null, 'a')"), false);
  assert.equal(ev("length('abc')"), 3);
  assert.equal(ev('length(store.list)'), 3);
  assert.equal(ev('length(store.obj)'), 2);
  assert.equal(ev('length(null)'), 0);
  assert.equal(ev("upper('abc')"), 'ABC');
  assert.equal(ev("lower('ABC')"), 'abc');
  assert.equal(ev("trim('  x ')"), 'x');
  assert.equal(ev("replace('a-b-c', '-', '_')"), 'a_b_c');
  assert.deepEqual(ev("split('a,b,c', ',')"), ['a', 'b', 'c']);
  assert.deepEqual(ev("split('', ',')"), []);
  assert.equal(ev("split_part('public.users', '.', 1)"), 'public');
  assert.equal(ev("split_part('public.users', '.', 2)"), 'users');
  assert.equal(ev("split_part('public.users', '.', 3)"), '');
  assert.equal(ev("join(['a', 1, true], '-')"), 'a-1-true');
  assert.equal(ev('join(store.list)'), '1,2,3');
  assert.equal(ev("coalesce(null, state.missing, 'd', 'e')"), 'd');
  assert.equal(ev('coalesce(null)'), null);
  assert.deepEqual(ev('keys(store.obj)'), ['a', 'b']);
  assert.equal(ev("int('42')"), 42);
  assert.equal(ev('int(3.9)'), 3);
  assert.equal(ev('int(env.N) + 1'), 4);
  assert.equal(ev("float('2.5')"), 2.5);
  assert.equal(ev('float(2)'), 2);
  assert.equal(ev('string(12)'), '12');
  assert.equal(ev('string(store.obj)'), '{"a":1,"b":"x"}');
  assert.equal(ev('string(null)'), '');
  assert.deepEqual(ev('json(\'{"a":[1,2]}\')'), { a: [1, 2] });
  assert.equal(ev('json(store.list)'), '[1,2,3]');
  assert.equal(ev('now()'), '2025-03-01T08:30:00.000Z');
  fails("int('abc')", /int\(\) cannot convert/);
  fails("float('x')", /float\(\) cannot convert/);
  fails("json('{bad')", /invalid JSON/);
  fails('length(1)', /length\(\) needs a string, list or object/);
  fails("upper('a', 'b')", /upper\(\) takes 1 argument/);
  fails('now(1)', /now\(\) takes 0 argument/);
  fails('join(1)', /join\(\) needs a list/);
  fails("split_part('a', '.', 0)", /position must be 1 or more/);
  fails('keys([1])', /keys\(\) needs an object/);
});

test('syntax errors and limits surface as evaluation errors', () => {
  fails('1 +', /invalid expression: unexpected end of expression at 3/);
  fails("'x", /unterminated string/);
  fails('x'.repeat(4097), /longer than 4096 characters/);
  const big = scope({ big: 'x'.repeat(9 * 1024 * 1024) });
  fails('big + big', /string longer than 16777216 characters/, big);
  fails("replace(big, 'x', 'xx')", /string longer than/, big);
  fails('('.repeat(70) + '1' + ')'.repeat(70), /nesting deeper than 64/);
});

test('templates: scope and function braces are expressions, other braces stay; objects insert as JSON', () => {
  const s = scope();
  const vars = (n: string) => ({ USER: 'bob' })[n];
  assert.equal(renderText('done: {state.load.rows} rows', s, vars), 'done: 1520 rows');
  assert.equal(renderText('{"json": {upper(env.NAME)}}', s, vars), '{"json": ADA}');
  assert.equal(renderText('select {a: 1} from t where x = {loop.index}', s, vars), 'select {a: 1} from t where x = 1');
  assert.equal(renderText('{state.load.tasks}', s, vars), '[{"stream_name":"public.users","rows":3}]');
  assert.equal(renderText('[{state.missing}]', s, vars), '[]');
  assert.equal(renderText('${USER} and {env.NAME}', s, vars), 'bob and ada');
  assert.equal(renderText("{coalesce(state.missing, '}')}", s, vars), '}');
  assert.throws(() => renderText('${NOPE}', s, vars), /variable NOPE is not set/);
  // A string that is exactly one template keeps its type where values are structured.
  assert.equal(renderTyped('{state.load.rows}', s, vars), 1520);
  assert.equal(renderTyped('{state.load.rows} rows', s, vars), '1520 rows');
  assert.deepEqual(renderDeep({ rows: '{state.load.rows}', list: ['{loop.index}', 'x'] }, s, vars, true), { rows: 1520, list: [1, 'x'] });
  assert.deepEqual(renderDeep({ rows: '{state.load.rows}' }, s, vars, false), { rows: '1520' });
  assert.equal(expressionText('{state.transform.failed == 0}', vars), 'state.transform.failed == 0');
  assert.equal(expressionText("'${USER}' == 'bob'", vars), "'bob' == 'bob'");
  assert.equal(toText(true), 'true');
});

test('variables: run vars over job vars over the file env over the env layers; env.* sees them all', () => {
  const layers = (n: string) => ({ PROJECT_ONLY: 'p', SHARED: 'layer', URL: 'http://x' })[n];
  const v = pipelineVars({ SHARED: 'file', NOTIFY: '${URL}/hook', BROKEN: '${NOT_SET}', NUM: 5 }, { SHARED: 'job', JOBV: 1 }, { RUNV: true, JOBV: 2 }, layers);
  assert.equal(v.lookup('SHARED'), 'job');
  assert.equal(v.lookup('JOBV'), '2');
  assert.equal(v.lookup('NOTIFY'), 'http://x/hook');
  assert.equal(v.lookup('PROJECT_ONLY'), 'p');
  assert.equal(v.lookup('NUM'), '5');
  assert.equal(v.lookup('NOPE'), undefined);
  const s: EvalScope = { roots: new Map([['env', v.env]]) };
  assert.equal(evaluateSource('env.NOTIFY', s), 'http://x/hook');
  assert.equal(evaluateSource('env.SHARED', s), 'job');
  assert.equal(evaluateSource('env.RUNV', s), true);
  assert.equal(evaluateSource('env.NUM', s), 5);
  assert.throws(() => evaluateSource('env.BROKEN', s), /variable NOT_SET is not set/);
});

test('timestamp scope: UTC parts of the execution start', () => {
  const t = timestampScope(new Date('2025-03-01T08:05:09.123Z'));
  assert.deepEqual(t, {
    rfc3339: '2025-03-01T08:05:09Z',
    date: '2025-03-01',
    datetime: '2025-03-01 08:05:09',
    unix: 1740816309,
    YYYY: '2025',
    MM: '03',
    DD: '01',
    HH: '08',
    file_name: '2025_03_01_080509',
  });
});
