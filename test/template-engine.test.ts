// The nunjucks TemplateEngine as Jinja: Jinja additions,
// macros, error messages and the compiled-template cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import nunjucks from 'nunjucks';
import { EngineError, errorChain } from '../engine/errors.js';
import { callArgs } from '../engine/template/call-args.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';

const engine = createNunjucksEngine();
let keys = 0;

/** Renders `source` once under a fresh cache key, as model 'a'. */
function render(source: string, context: Record<string, unknown> = {}): string {
  return engine.render(`t${keys++}`, source, context, 'a');
}

function renderError(source: string, context: Record<string, unknown> = {}): EngineError {
  try {
    render(source, context);
  } catch (err) {
    assert.ok(err instanceof EngineError, `expected an EngineError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected the render of ${JSON.stringify(source)} to fail`);
}

test('{% do %} runs list and dict methods for their side effects', () => {
  assert.equal(render("{% set items = [1, 2] %}{% do items.append(3) %}{% do items.extend([4]) %}{{ items | join(',') }}"), '1,2,3,4');
  assert.equal(
    render("{% set d = {'a': 1} %}{% do d.update({'b': 2}) %}{{ d.keys() | join(',') }}|{{ d.values() | sum }}|{{ d.get('z', 'none') }}"),
    'a,b|3|none',
  );
  assert.equal(render("{% for k, v in {'x': 1, 'y': 2}.items() %}{{ k }}={{ v }};{% endfor %}"), 'x=1;y=2;');
});

test('namespace() attributes can be assigned inside a loop', () => {
  const src = '{% set ns = namespace(count=0, seen=[]) %}{% for x in [5, 6, 7] %}{% set ns.count = ns.count + 1 %}{% endfor %}{{ ns.count }}';
  assert.equal(render(src), '3');
  assert.equal(render("{% set ns = namespace(v='') %}{% set ns.v %}block{% endset %}{{ ns.v }}"), 'block');
  assert.equal(
    renderError("{% set d = {} %}{% set d.x = 1 %}").message,
    "could not compile template for model 'a': cannot assign attribute on non-namespace object (line 1, column 20)",
  );
});

test('format and tojson filters', () => {
  assert.equal(render("{{ '%s-%d' | format('a', 3.9) }}"), 'a-3');
  assert.equal(render("{{ '%.2f|%r|%%|%5s|%-3d|%i' | format(2.345, 'q', 'x', 7, 8) }}"), "2.35|'q'|%|    x|7  |8");
  assert.equal(render("{{ '%(t)s.%(c)s' | format(t='orders', c='id') }}"), 'orders.id');
  assert.equal(render("{{ {'b': [1, 'x'], 'a': none} | tojson }}"), '{"a": null, "b": [1, "x"]}');
  assert.equal(render("{{ {'k': [1]} | tojson(2) }}"), '{\n  "k": [\n    1\n  ]\n}');
  assert.equal(render("{{ \"it's <b>\" | tojson }}"), '"it\\u0027s \\u003cb\\u003e"');
});

test('+ concatenates lists and still adds numbers and strings', () => {
  assert.equal(render('{% set l = [1] + [2,3] %}{{ l | length }}'), '3');
  assert.equal(render("{{ ([1] + [2]) | join('-') }}"), '1-2');
  assert.equal(render("{{ 'ab' + 'cd' }}|{{ 1 + 2 }}|{{ 'x' ~ 1 }}"), 'abcd|3|x1');
  assert.equal(
    renderError("select\n  {{ [1] + 'x' }}").message,
    `could not compile template for model 'a': can only concatenate list (not "str") to list (line 2, column 3)`,
  );
});

test('the list + of other nunjucks users in the process is untouched', () => {
  assert.equal(nunjucks.renderString('{{ [1] + [2] }}', {}), '12');
});

test('dict(), range() and the Python constants', () => {
  assert.equal(render('{{ dict(a=1).a }}'), '1');
  assert.equal(render("{{ dict({'a': 1}, b=2) | tojson }}"), '{"a": 1, "b": 2}');
  assert.equal(render("{{ range(3) | join(',') }}"), '0,1,2');
  assert.equal(render('{% if True and not False and None is none %}ok{% endif %}'), 'ok');
});

test('keyword arguments reach context functions; callArgs splits them', () => {
  const seen: unknown[] = [];
  const config = (...args: unknown[]): string => {
    seen.push(callArgs(args));
    return '';
  };
  assert.equal(render("{{ config(materialized='incremental', unique_key=['a','b']) }}select 1", { config }), 'select 1');
  assert.deepEqual(seen, [{ positional: [], kwargs: { materialized: 'incremental', unique_key: ['a', 'b'] } }]);
  assert.deepEqual(callArgs(['x', 2]), { positional: ['x', 2], kwargs: {} });
  assert.deepEqual(callArgs(['x', { d: 1, __keywords: true }]), { positional: ['x'], kwargs: { d: 1 } });
});

test('undefined variables and attributes render as empty strings', () => {
  assert.equal(render('[{{ nope }}][{{ nope.x }}][{{ nope | upper }}]'), '[][][]');
  assert.equal(render("{{ nope | default('d') }}|{% if nope is not defined %}undef{% endif %}"), 'd|undef');
});

test('prepended macro definitions are callable and leave only the text between them', () => {
  const macros = "{% macro cents(col) %}({{ col }} / 100){% endmacro %}\n{% macro tbl(x) %}{{ ref(x) }}{% endmacro %}\n";
  const out = render(`${macros}select {{ cents('amount') }} from {{ tbl('orders') }}`, { ref: (x: string) => `dev.${x}` });
  assert.equal(out, '\n\nselect (amount / 100) from dev.orders');
  assert.equal(render("{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}{{ greet('bo', punct='?') }}"), 'hi bo?');
});

test('Jinja whitespace control and Python truthiness', () => {
  assert.equal(render('a\n{%- if true -%}\n  b  \n{%- endif -%}\n c'), 'abc');
  assert.equal(render('{% if [] %}T{% else %}F{% endif %}|{{ [] or "dflt" }}|{{ 0 == "" }}'), 'F|dflt|False'); // Jinja prints Python's False
  assert.equal(render("{% if x in ('a', 'b') %}in{% endif %}|{% if x in ('ab', 'c') %}substring{% endif %}", { x: 'a' }), 'in|');
});

test('for loops with an if filter count only the kept items', () => {
  assert.equal(render('{% for x in [1, 2, 3] if x > 1 %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% endfor %}'), '1/2:2 2/2:3 ');
  assert.equal(render("{% for k, v in {'a': 1, 'b': 0} | dictsort if v %}{{ k }}{% endfor %}"), 'a');
});

test('Python string methods and operators', () => {
  assert.equal(render("{{ 'a b  c'.split() | join('|') }} {{ 'x'.upper() }} {{ ', '.join(['a','b']) }}"), 'a|b|c X a, b');
  assert.equal(render("{{ 'a.b.c'.replace('.', '_') }} {{ '  t '.strip() }} {{ 'abc'.startswith('ab') }}"), 'a_b_c t True');
  assert.equal(render("{{ '-' * 3 }} {{ '%s_%s' % ('a', 1) }} {{ -7 % 3 }} {{ '{}.{}'.format('s', 't') }}"), '--- a_1 2 s.t');
  assert.equal(render("{{ cols | map(attribute='name') | join(', ') }}", { cols: [{ name: 'id' }, { name: 'ts' }] }), 'id, ts');
});

test('Python slices on lists and strings', () => {
  const xs = [1, 2, 3, 4];
  assert.equal(render("{{ xs[1:] | join }}|{{ xs[:2] | join }}|{{ xs[::-1] | join }}|{{ xs[-2:] | join }}|{{ xs[-1] }}", { xs }), '234|12|4321|34|4');
  assert.equal(render("{{ 'abcdef'[1:4] }}|{{ name[:3] }}", { name: 'orders' }), 'bcd|ord');
  assert.equal(renderError('{{ xs[1:2:3:4] }}', { xs }).message, "could not parse template for model 'a': too many slice components (line 1, column 6)");
});

test('a syntax error is a compile EngineError naming the model and position', () => {
  const err = renderError('select\n\n{{ foo( }}');
  assert.equal(err.code, 'compile');
  assert.equal(err.message, "could not parse template for model 'a': unexpected token: }} (line 3, column 9)");
  assert.equal(renderError('{% if x %}').message, "could not parse template for model 'a': expected elif, else, or endif, got end of file");
});

test("an EngineError thrown by a context function stays the render error's cause", () => {
  const notFound = new EngineError('compile', "ref('x') not found.");
  const err = renderError("select *\nfrom {{ ref('x') }}", {
    ref: () => {
      throw notFound;
    },
  });
  assert.equal(err.code, 'compile');
  assert.equal(err.message, "could not compile template for model 'a'");
  assert.equal(err.cause, notFound);
  assert.equal(errorChain(err), "could not compile template for model 'a': ref('x') not found.");
});

test('other render errors keep their message and line', () => {
  assert.equal(
    renderError('a\n\n  {{ missing_macro() }}').message,
    "could not compile template for model 'a': Unable to call `missing_macro`, which is undefined or falsey (line 3, column 19)",
  );
});

test('the cache reuses a compiled template across contexts and recompiles a changed source', () => {
  const e = createNunjucksEngine();
  const src = '{% if is_incremental() %}where ts > {{ lo }}{% else %}full{% endif %}';
  assert.equal(e.render('m', src, { is_incremental: () => false }), 'full');
  assert.equal(e.render('m', src, { is_incremental: () => true, lo: 5 }), 'where ts > 5');
  assert.equal(e.render('m', 'changed {{ lo }}', { lo: 1 }), 'changed 1');
  // the model name in messages defaults to the cache key
  assert.throws(() => e.render('orders', '{{ x(', {}), { message: /^could not parse template for model 'orders': / });
});

// Ref-only templates (text and `{{ ref('…') }}`) skip nunjucks; their output and errors must be
// exactly the full engine's. A trailing `{# #}` comment forces the full engine for comparison.
test('ref-only templates render exactly as the full engine renders them', () => {
  const relations: Record<string, string> = { a: 's.a', b: '"S"."b"', 'pkg.c': 's.c' };
  const calls: string[] = [];
  const ref = (...args: unknown[]) => {
    const name = args.map(String).join('.');
    calls.push(name);
    if (!(name in relations)) throw new EngineError('compile', `ref('${name}') not found.`);
    return relations[name];
  };
  const sources = [
    'select 1 as id\n',
    "select * from {{ ref('a') }} x join {{ref(\"b\")}} y using (id)\n  where '}}' <> '%}'",
    "{{ ref('a') }}{{ ref( 'b' ) }}",
    "select '{' || '}' from {{ ref('a') }}\n\n",
  ];
  for (const src of sources) {
    calls.length = 0;
    const fast = render(src, { ref });
    const fastCalls = [...calls];
    calls.length = 0;
    assert.equal(fast, render(`${src}{# full engine #}`, { ref }), src);
    assert.deepEqual(fastCalls, calls, `ref() calls of ${src}`);
  }
  const missing = errorChain(renderError("select * from {{ ref('zz') }}", { ref }));
  assert.equal(missing, errorChain(renderError("select * from {{ ref('zz') }}{# full #}", { ref })));
  assert.equal(missing, "could not compile template for model 'a': ref('zz') not found.");
});

test('templates that only look ref-only take the full engine', () => {
  const ref = (name: unknown) => ({ toString: () => `rel_${String(name)}` });
  // ref() returning a non-string: printed the way nunjucks prints it.
  assert.equal(render("from {{ ref('a') }}", { ref }), 'from rel_a');
  const str = (name: unknown) => `s.${String(name)}`;
  assert.equal(render("{{- ref('a') }} x", { ref: str }), 's.a x');
  assert.equal(render("a {{ ref('a') -}}  b", { ref: str }), 'a s.ab');
  assert.equal(render("{{ ref('a') }} {{ this }}", { ref: str, this: 't' }), 's.a t');
  assert.equal(render("{{ ref('a', 'b') }}", { ref: (...a: unknown[]) => a.join('.') }), 'a.b');
});

// Macro files come as a prefix: compiled once per scope and run in each model's context.
test('a macro-definitions prefix renders like the concatenated template, in the model context', () => {
  const prefix = "{% macro rel(n) %}{{ ref(n) }}{% endmacro %}\n\n{%- macro me() -%}{{ this }}/{{ var_x }}{%- endmacro %}\n";
  const body = "select * from {{ rel('a') }} -- {{ me() }}\n{% if true %}x{% endif %}";
  for (const [who, n] of [['m1', 1], ['m2', 2]] as const) {
    const context = { ref: (name: unknown) => `s.${String(name)}_${n}`, this: who, var_x: n };
    const split = engine.render(who, body, context, who, prefix).trim();
    const whole = engine.render(`${who}-whole`, prefix + body, context, who).trim();
    assert.equal(split, whole);
    assert.equal(split, `select * from s.a_${n} -- ${who}/${n}\nx`);
  }
  // A ref-only body with a macro prefix still takes the fast path and sees nothing of the prefix.
  assert.equal(engine.render('m3', "from {{ ref('a') }}", { ref: () => 's.a' }, 'm3', prefix).trim(), 'from s.a');
  // Errors in the body point into the body, not into the macro text before it.
  assert.equal(
    errorChain(catchError(() => engine.render('m4', 'ok\n{{ 1 +  }}', {}, 'm4', prefix))),
    "could not parse template for model 'm4': unexpected token: }} (line 2, column 9)",
  );
});

test('a macro prefix contributes only its macros: text and other statements around them are left out, as dbt does', () => {
  const prefix = '/* licence header */\n{% set x = 41 %}head\n{% macro m() %}M{% endmacro %}tail';
  assert.equal(engine.render('p1', '[{{ x }}]{{ m() }}', {}, 'p1', prefix), '[]M');
  // A syntax error in a macro prefix is reported against the prefix, not at a line of the model.
  assert.match(errorChain(catchError(() => engine.render('p2', 'x', {}, 'p2', '{% macro a() %}'))), /^could not parse the macros of model 'p2': unexpected end of file/);
});

function catchError(f: () => unknown): EngineError {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof EngineError);
    return err;
  }
  assert.fail('expected an error');
}
