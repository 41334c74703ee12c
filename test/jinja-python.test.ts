// Python's view of values inside templates, as dbt packages use it: methods
// on strings, lists and dicts, integer attributes in filters, tests, call
// blocks, namespaces and dbt's type filters. Expected outputs are what
// Jinja2 3.1 renders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';

let n = 0;
function render(source: string, context: Record<string, unknown> = {}): string {
  return createNunjucksEngine().render(`t${n++}`, source, context);
}

test('integer attribute= is an index in map, sort and groupby', () => {
  const rows = [['b', 2], ['a', 1], ['b', 3]];
  assert.equal(render('{{ rows | map(attribute=0) | join(",") }}', { rows }), 'b,a,b');
  assert.equal(render('{{ rows | sort(attribute=1) | map(attribute=0) | join(",") }}', { rows }), 'a,b,b');
  assert.equal(render('{% for g in rows | groupby(0) %}{{ g.grouper }}:{{ g.list | length }} {% endfor %}', { rows }), 'a:1 b:2 ');
  assert.equal(render('{% for k, items in rows | groupby(0) %}{{ k }}={{ items | map(attribute=1) | join("+") }} {% endfor %}', { rows }), 'a=1 b=2+3 ');
  assert.equal(render("{{ cols | map(attribute='t.name') | join(',') }}", { cols: [{ t: { name: 'x' } }, { t: { name: 'y' } }] }), 'x,y');
  assert.equal(render("{{ ds | sort(attribute='k') | map(attribute='k') | join }}", { ds: [{ k: 'b' }, { k: 'a' }] }), 'ab');
});

test('string methods', () => {
  assert.equal(render("{{ 'a,b,c'.rsplit(',', 1) }}|{{ 'abc'.find('c') }}|{{ '42'.isdigit() }}|{{ 'x y'.title() }}|{{ 'aBC'.capitalize() }}"), "['a,b', 'c']|2|True|X Y|Abc");
  assert.equal(render("{{ 'xxaxx'.lstrip('x') }}|{{ 'xxaxx'.rstrip('x') }}|{{ '  a '.strip() }}|{{ 'a.b'.endswith('.b') }}|{{ 'A'.lower() }}{{ 'b'.upper() }}"), 'axx|xxa|a|True|aB');
  assert.equal(render("{{ '{0}-{1}-{x}'.format('a', 'b', x='c') }}|{{ 'a_b'.replace('_', ' ') }}|{{ '-'.join(['a', 'b']) }}"), 'a-b-c|a b|a-b');
  assert.equal(render("{{ 'abc'.index('b') }}|{{ 'aaa'.count('a') }}|{{ 'a b'.split(' ') }}|{{ 'Ab1'.isalnum() }}|{{ ' '.isspace() }}"), "1|3|['a', 'b']|True|True");
  assert.equal(render("{{ 'abc'.zfill(5) }}|{{ 'a'.center(3, '*') }}|{{ 'a'.ljust(3, '.') }}|{{ 'a'.rjust(3, '.') }}|{{ 'aBc'.swapcase() }}"), '00abc|*a*|a..|..a|AbC');
  assert.equal(render("{{ 'a-b-c'.partition('-') }}|{{ 'abc'.rfind('c') }}|{{ 'x'.casefold() }}|{{ 'ab'.removeprefix('a') }}|{{ 'ab'.removesuffix('b') }}"), "['a', '-', 'b-c']|2|x|b|a");
  assert.equal(render("{{ 'a\\nb'.splitlines() }}|{{ 'Ab'.istitle() }}"), "['a', 'b']|True");
  // str.format's format specs and conversions.
  assert.equal(render("{{ '{:>4}|{:<3}|{:^5}|{:*>4}'.format('a', 'b', 'c', 'd') }}"), '   a|b  |  c  |***d');
  assert.equal(render("{{ '{:.2f}|{:05d}|{:,}|{:+d}|{:.1%}|{:x}|{!r}'.format(3.14159, 42, 1234567, 5, 0.256, 255, 'q') }}"), "3.14|00042|1,234,567|+5|25.6%|ff|'q'");
  assert.equal(render("{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{t.name}'.format(t=rel) }}", { rel: { name: 'orders' } }), 'aba|orders');
});

test('list and dict methods; {% do %} mutates', () => {
  assert.equal(render('{% set l = [3] %}{% do l.append(1) %}{% do l.extend([2]) %}{% do l.insert(0, 9) %}{% do l.remove(3) %}{{ l }}|{{ l.index(2) }}|{{ l.count(1) }}|{{ l.pop() }}|{{ l }}'), '[9, 1, 2]|2|1|2|[9, 1]');
  assert.equal(render('{% set l = [3, 1, 2] %}{% do l.sort() %}{{ l }}{% do l.reverse() %}{{ l }}'), '[1, 2, 3][3, 2, 1]');
  assert.equal(render("{% set d = {'a': 1} %}{% do d.update({'b': 2}) %}{% do d.update(c=3) %}{{ d.items() | list }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.get('z', 0) }}|{{ d.pop('a') }}|{{ d }}"), "[['a', 1], ['b', 2], ['c', 3]]|['a', 'b', 'c']|[1, 2, 3]|0|1|{'b': 2, 'c': 3}");
  assert.equal(render("{% for k, v in {'x': 1}.items() %}{{ k }}={{ v }}{% endfor %}"), 'x=1');
  assert.equal(render("{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}|{{ {'a': 1, 'b': 2} | list }}|{{ 'ab' | list }}"), "ab|['a', 'b']|['a', 'b']");
  assert.equal(render("{% set d = {} %}{% do d.setdefault('k', []).append(1) %}{{ d }}"), "{'k': [1]}");
});

test('namespace, call blocks with caller arguments, whitespace control', () => {
  assert.equal(render('{% set ns = namespace(a=1, found=false) %}{% for x in [1, 2] %}{% set ns.a = ns.a + x %}{% endfor %}{{ ns.a }}'), '4');
  assert.equal(render('{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap("b") %}hi{% endcall %}'), '<b>hi</b>');
  assert.equal(render('{% macro each(xs) %}{% for x in xs %}{{ caller(x, loop.index) }}{% endfor %}{% endmacro %}{% call(item, i) each(["a", "b"]) %}{{ i }}{{ item }};{% endcall %}'), '1a;2b;');
  assert.equal(render('a  {%- if true -%}  b  {%- endif -%}  c\n{{- " d" }}'), 'ab c d'.replace(' c', 'c'));
});

test('is tests, in / not in, ~ and the format filter', () => {
  const ctx = { s: 'x', d: { a: 1 }, l: [1], i: 3, nothing: null };
  assert.equal(render('{{ nothing is none }}{{ s is none }}{{ s is string }}{{ d is mapping }}{{ l is mapping }}{{ l is iterable }}{{ s is iterable }}{{ i is number }}{{ i is iterable }}', ctx), 'TrueFalseTrueTrueFalseTrueTrueTrueFalse');
  assert.equal(render('{{ s is defined }}{{ zz is defined }}{{ zz is undefined }}{{ l is sequence }}{{ true is boolean }}{{ i is integer }}{{ 1.5 is float }}{{ l is not none }}', ctx), 'TrueFalseTrueTrueTrueTrueTrueTrue');
  assert.equal(render("{{ [1, [2]] == [1, [2]] }}{{ {'a': [1]} == {'a': [1]} }}{{ [1] != [2] }}{{ 1 == true }}{{ '1' == 1 }}{{ none == nothing }}{{ 0 == '' }}", ctx), 'TrueTrueTrueTrueFalseTrueFalse');
  assert.equal(render("{{ 'a' in d }}{{ 'b' not in d }}{{ 1 in l }}{{ 'x' in 'xyz' }}{{ 2 not in l }}", ctx), 'TrueTrueTrueTrueTrue');
  assert.equal(render("{{ 'a' ~ 1 ~ none }}|{{ '%s=%d' | format('k', 2) }}|{{ '%(k)s' | format(k='v') }}"), 'a1None|k=2|v');
});

test("dbt's type filters: as_number, as_bool, as_native, as_text", () => {
  assert.equal(render("{{ ('5432' | as_number) + 1 }}|{{ '1.5' | as_number }}|{{ 'True' | as_bool }}|{{ 'false' | as_bool }}|{{ 7 | as_text }}"), '5433|1.5|True|False|7');
  assert.equal(render("{{ ('[1, 2]' | as_native)[1] }}|{{ ('{\"a\": 1}' | as_native).a }}|{{ 'plain' | as_native }}|{{ ('None' | as_native) is none }}"), '2|1|plain|True');
  assert.throws(() => render("{{ 'abc' | as_number }}"), /as_number: 'abc' is not a number/);
  assert.throws(() => render("{{ 'yes' | as_bool }}"), /as_bool: 'yes' is not a boolean/);
  // profiles.yml's marker of an unset env_var passes through: profiles.ts reports it for the target in use only.
  assert.equal(render("{{ '__unset_env_var_PORT__' | as_number }}"), '__unset_env_var_PORT__');
  assert.equal(render("{{ {'b': 1, 'a': [True, None]} | tojson }}"), '{"a": [true, null], "b": 1}');
});
