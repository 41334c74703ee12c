// Macro files as dbt reads them: only their macros count, and a syntax error
// names the macro file and its own line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.js';
import { markMacroFile, splitMacroFiles } from '../engine/template/macro-files.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';

const header = '/*\nAs described by the Infinite Lambda team here: https://example.com\n*/\n';

test('text outside macro blocks in a macro file is never rendered into a model', () => {
  const prefix = [
    markMacroFile('dbt_packages/pkg/macros/a.sql', `${header}{% macro a() %}A{% endmacro %}\nprose after\n`),
    markMacroFile('macros/b.sql', '{% set hidden = 1 %}{%- macro b(x) -%}B{{ x }}{%- endmacro %}{% test t(model) %}T{{ model }}{% endtest %}'),
  ].join('\n');
  const engine = createNunjucksEngine();
  assert.equal(engine.render('m', "{{ a() }}|{{ b(1) }}|{{ test_t('m') }}|{{ hidden }}", {}, 'm', prefix), 'A|B1|Tm|');
  assert.equal(engine.render('n', 'plain', {}, 'n', prefix), 'plain');
});

test('a syntax error in a macro file names that file and its own line', () => {
  const prefix = [
    markMacroFile('macros/ok.sql', '{% macro ok() %}\n\n\nfine{% endmacro %}\n'),
    markMacroFile('dbt_packages/pkg/macros/broken.sql', '{% macro broken() %}\nline two\n{{ x( }}\n{% endmacro %}\n'),
  ].join('\n');
  const engine = createNunjucksEngine();
  for (const model of ['m1', 'm2']) {
    assert.throws(
      () => engine.render(model, 'select 1', {}, model, prefix),
      (err: unknown) => err instanceof EngineError && /^could not parse macro file dbt_packages\/pkg\/macros\/broken\.sql:3:\d+: unexpected token/.test(err.message),
    );
  }
});

test('a marked prefix splits back into its files', () => {
  const prefix = `lead${markMacroFile('a.sql', 'x\n')}\n${markMacroFile('b#c.sql', 'y')}`;
  assert.deepEqual(splitMacroFiles(prefix), [
    { path: undefined, text: 'lead' },
    { path: 'a.sql', text: 'x\n\n' },
    { path: 'b%23c.sql', text: 'y' },
  ]);
});

test('an error raised inside a macro of a macro file names the macro, the file and its line', () => {
  const prefix = markMacroFile('dbt_packages/pkg/macros/inner.sql', "{% macro outer() %}{{ inner() }}{% endmacro %}\n{% macro inner() %}\n  ok\n  {{ fail('boom') }}\n{% endmacro %}");
  const fail = (m: string) => {
    throw new Error(m);
  };
  assert.throws(
    () => createNunjucksEngine().render('m', 'select {{ outer() }}', { fail }, 'm', prefix),
    (err: unknown) => err instanceof EngineError && err.message === "could not compile template for model 'm': boom (in macro 'inner' at dbt_packages/pkg/macros/inner.sql:4:10)",
  );
});
