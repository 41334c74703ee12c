// Template shapes (engine/template/template-shape.ts): templates that differ
// only in their text and string literals share one parse and one generated
// function. What a template gets through its shape — code, constants and
// error positions — must be exactly what compiling it on its own gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.js';
import { generate, generateByShape } from '../engine/template/jinja-compiler.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';
import { templateShape } from '../engine/template/template-shape.js';

/** Templates that exercise every path of nunjucks' lexer the shape follows. */
const CORPUS: readonly string[] = [
  "select * from {{ ref('orders') }} o\njoin {{ ref('customers') }} c on c.id = o.id\n",
  "{{ config(tags=['a', \"b\"]) }}\nselect {{ double('r0.amount') }} as amount\nlimit {{ limit_n }}\n",
  "{% if is_incremental() %}where id > (select max(id) from {{ this }}){% endif %}\n",
  "  {%- if x -%}\n   kept   \n  {%- endif -%}  \ntail",
  "a {{- ' b ' -}} c {#- a comment -#} d {#x#}e{#-#}f",
  "{% for c in ['a', 'b'] if c != 'b' %}{{ loop.index }}:{{ c }}{% else %}none{% endfor %}",
  "{% macro m(a='x\\'y', b=\"q\\\"r\\n\") %}[{{ a }}|{{ b }}]{% endmacro %}{{ m() }}{{ m('z') }}",
  "{% set d = {'k': 'v', 'n': 1} %}{{ d.k }}{{ d['n'] }}",
  "{% set ns = namespace(v='') %}{% set ns.v %}block {{ 'text' }}{% endset %}{{ ns.v }}",
  "{{ 1.5 + 2 }} {{ 10 // 3 }} {{ 2 ** 3 }} {{ 'a' ~ 'b' }} {{ 3 == 3 }} {{ 1 != 2 }} {{ x === y }}",
  "{{ ('%s-%s' % ('a', 'b')) | upper }} {{ 'x' in ('x', 'y') }} {{ [1, 2][1:] }}",
  "{% do xs.append('q') %}{{ xs | join(',') }}",
  "{% set a = 'one' %}{% set b %}two{% endset %}{{ a }}{{ b }}",
  '{{ "unterminated }}',
  '{% if %}',
  "{{ ref('a') }",
  'text with a stray #} in it',
  "{% raw %}{{ not parsed }}{% endraw %}",
  "{{ r/abc/ }}",
  "{{ 'quote' }}{{-'dash'-}}{%- set x = 'y' -%}",
  '{', '{{', 'just text', '', '\n\n', '{#only a comment#}',
  "line1\nline2 {{ ref('x') }}\n  line3 {{ missing() }}\nline4",
  "{{\n  ref(\n    'x'\n  )\n}}\n{{ undefined_fn() }}",
  "{% if a %}\n{{ b }}\n{% elif c %}\n{{ 'd' }}\n{% else %}\n{{ e | default('f') }}\n{% endif %}",
  "{{ x if y else 'z' }} {{ not a and b or 'c' }}",
  "{{ 'a{{b}}c' }} {{ \"%}\" }} {{ '#}' }}",
];

test('a template compiled through its shape gets the code, constants and positions of its own compile', () => {
  let viaShape = 0;
  for (const source of CORPUS) {
    let own;
    try {
      own = generate(source, 'm');
    } catch {
      // A syntax error: never compiled through a shape (the shape fails the same way).
      assert.equal(generateByShape(source, 'm'), undefined, source);
      continue;
    }
    const shaped = generateByShape(source, 'm');
    if (shaped === undefined) continue;
    viaShape++;
    assert.equal(shaped.code, own.code, source);
    assert.deepEqual(shaped.constants, own.constants, source);
    assert.deepEqual(shaped.positions, own.positions, source);
  }
  assert.ok(viaShape >= 20, `only ${viaShape} templates went through a shape`);
});

test('templates that differ in text and string literals share one shape; structure, names and numbers do not', () => {
  const shape = (s: string) => templateShape(s)?.canonical;
  assert.equal(shape("a {{ ref('x') }} b"), shape("other\ntext {{  ref( 'y' ) }} more"));
  assert.equal(shape("{{ config(tags=['t1']) }}\nselect 1"), shape("{{ config(tags=['t22']) }}\nselect 2"));
  assert.notEqual(shape("a {{ ref('x') }}"), shape("a {{ src('x') }}"));
  assert.notEqual(shape('{{ limit(1) }}'), shape('{{ limit(2) }}'));
  assert.notEqual(shape('{% if a %} {% endif %}'), shape('{% if a %}x{% endif %}'), 'whitespace-only text stays in the shape');
  assert.notEqual(shape('a {{- x }}'), shape('a {{ x }}'));
  for (const alone of ['{% raw %}x{% endraw %}', '{{ r/a/ }}', 'a #} b', '{{ x', "{{ 'x }}", '\uE000']) assert.equal(templateShape(alone), undefined, alone);
});

test("render errors of templates sharing a shape name each template's own line and column", () => {
  const engine = createNunjucksEngine();
  const fail = (key: string, source: string): string => {
    try {
      engine.render(key, source, { ref: (n: string) => n }, key);
    } catch (err) {
      assert.ok(err instanceof EngineError);
      return err.message;
    }
    assert.fail(`expected ${JSON.stringify(source)} to fail`);
  };
  const a = fail('a', "select 1\nfrom {{ ref('x') }}\nwhere {{ nope() }}");
  const b = fail('b', "select 1, 2, 3\n\n\nfrom   {{ ref('yy') }} where      {{ nope() }}");
  assert.equal(templateShape("select 1\nfrom {{ ref('x') }}\nwhere {{ nope() }}")?.canonical, templateShape("select 1, 2, 3\n\n\nfrom   {{ ref('yy') }} where      {{ nope() }}")?.canonical);
  assert.match(a, /\(line 3, column 14\)$/);
  assert.match(b, /\(line 4, column 42\)$/);
});
