// Jinja2 syntax as Python's Jinja2 reads it, where nunjucks differs: argument
// unpacking, varargs/kwargs in macros, trailing commas, expression dict keys
// and Python string literals. Expected outputs are what Jinja2 3.1 renders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';

let n = 0;
function render(source: string, context: Record<string, unknown> = {}): string {
  return createNunjucksEngine().render(`t${n++}`, source, context);
}

test('*args and **kwargs unpack into a call', () => {
  const macro = '{% macro m(a, b, c=3, d=4) %}{{ a }}-{{ b }}-{{ c }}-{{ d }}{% endmacro %}';
  assert.equal(render(`${macro}{{ m(*xs) }}`, { xs: [1, 2] }), '1-2-3-4');
  assert.equal(render(`${macro}{{ m(1, *xs, d=9) }}`, { xs: [2, 7] }), '1-2-7-9');
  assert.equal(render(`${macro}{{ m(**kw) }}`, { kw: { a: 'x', b: 'y', d: 'z' } }), 'x-y-3-z');
  assert.equal(render(`${macro}{% set kw = {'c': 5} %}{{ m(1, 2, **kw) }}`), '1-2-5-4');
  assert.equal(render(`${macro}{{ m(*[1, 2], **{'d': 0}) }}`), '1-2-3-0');
  assert.throws(() => render(`${macro}{{ m(*none) }}`), /argument after \* must be an iterable/);
});

test('a macro receives extra positional arguments as varargs and extra keywords as kwargs', () => {
  const macro = '{% macro m(a, b=2) %}{{ a }} {{ b }} {{ varargs }} {{ kwargs }}{% endmacro %}';
  assert.equal(render(`${macro}{{ m(1) }}`), "1 2 [] {}");
  assert.equal(render(`${macro}{{ m(1, 5, 6, 7, x='y') }}`), "1 5 [6, 7] {'x': 'y'}");
  assert.equal(render(`${macro}{{ m(1, z=3, b=4) }}`), "1 4 [] {'z': 3}");
  // The surrogate_key pattern: varargs forwarded with *varargs.
  const fwd = '{% macro inner(a) %}{{ a }}:{{ varargs | join(",") }}{% endmacro %}{% macro outer(a) %}{{ inner(a, *varargs) }}{% endmacro %}';
  assert.equal(render(`${fwd}{{ outer('x', 'y', 'z') }}`), 'x:y,z');
  const kwfwd = '{% macro inner(a, sep="-") %}{{ a }}{{ sep }}{{ kwargs.get("extra", "") }}{% endmacro %}{% macro outer(a) %}{{ inner(a, **kwargs) }}{% endmacro %}';
  assert.equal(render(`${kwfwd}{{ outer('x', sep='+', extra='!') }}`), 'x+!');
});

test('a macro that does not use varargs/kwargs rejects extra arguments, as Jinja2 does', () => {
  const macro = '{% macro m(a) %}{{ a }}{% endmacro %}';
  assert.throws(() => render(`${macro}{{ m(1, 2) }}`), /macro 'm' takes not more than 1 argument\(s\)/);
  assert.throws(() => render(`${macro}{{ m(1, b=2) }}`), /macro 'm' takes no keyword argument 'b'/);
  assert.throws(() => render(`${macro}{{ m(1, a=2) }}`), /macro 'm' got multiple values for argument 'a'/);
  assert.equal(render(`${macro}{{ m(a=7) }}`), '7');
});

test('trailing commas in calls, lists, dicts and tuples', () => {
  const macro = '{% macro m(a, b=2,) %}{{ a }}{{ b }}{% endmacro %}';
  assert.equal(render(`${macro}{{ m(1,) }}|{{ m(1, b=3,) }}`), '12|13');
  assert.equal(render("{{ [1, 2,] }}|{{ {'a': 1,} }}|{{ (1, 2,) }}|{{ (1,) | length }}|{{ (5,)[0] }}"), "[1, 2]|{'a': 1}|[1, 2]|1|5");
  assert.equal(render("{{ 'a-b'.split('-',) }}"), "['a', 'b']");
  assert.equal(render('{% set x = [\n  1,\n  2,\n] %}{{ x | length }}'), '2');
});

test('dict keys are expressions; string-literal keys stay strings', () => {
  const cols = [{ column: 'id', t: 'int' }, { column: 'name', t: 'text' }];
  assert.equal(render('{% set d = {} %}{% for col in cols %}{% do d.update({col.column: col.t}) %}{% endfor %}{{ d }}', { cols }), "{'id': 'int', 'name': 'text'}");
  assert.equal(render("{% set kk = 'real' %}{{ {kk: 1} }}|{{ {'kk': 1} }}"), "{'real': 1}|{'kk': 1}");
  assert.equal(render("{% set d = {} %}{% for k, v in src.items() %}{% do d.update({k | lower: v}) %}{% endfor %}{{ d }}", { src: { A: 1, B: 2 } }), "{'a': 1, 'b': 2}");
  assert.equal(render("{{ {'a' ~ 'b': 1, 2: 'x'}['ab'] }}"), '1');
});

test('string literals read as Python reads them', () => {
  assert.equal(render("{{ 'a\\nb' }}"), 'a\nb');
  assert.equal(render("{{ 'a\\tb|\\\\|\\'|\\\"' }}"), 'a\tb|\\|\'|"');
  assert.equal(render("{{ '\\x41\\u00e9\\U0001F600' }}"), 'Aé😀');
  assert.equal(render("{{ '\\d+' }}"), '\\d+', 'an unknown escape keeps its backslash');
  assert.equal(render("{{ 'one \\\ntwo' }}"), 'one two', 'backslash-newline continues the line');
  assert.equal(render('{{ "it\'s" }}'), "it's");
  // A later error still reports the line it is on: the continued literal counts its lines.
  assert.throws(() => render("{{ 'a \\\nb' }}\n{{ x(1) }}"), /line 3/);
});

test('{% set a, b = pair %} unpacks, as Python does', () => {
  assert.equal(render("{% set schema, table = 'raw.orders'.split('.') %}{{ schema }}|{{ table }}"), 'raw|orders');
  assert.equal(render('{% set a, b = [1, 2] %}{% for x in [0] %}{% set c, d = "xy" %}{{ c }}{{ d }}{% endfor %}{{ a + b }}'), 'xy3');
  assert.throws(() => render("{% set a, b = 'x.y.z'.split('.') %}"), /too many values to unpack \(expected 2\)/);
  assert.throws(() => render("{% set a, b = ['x'] %}"), /not enough values to unpack \(expected 2, got 1\)/);
});
