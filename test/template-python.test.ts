// Python semantics behind the Jinja layer: printf formatting (expected values
// produced by CPython 3), method lookup, and the {% config %} rewrite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rewriteConfigBlocks } from '../engine/template/config-block.js';
import { createNunjucksEngine } from '../engine/template/nunjucks-engine.js';
import { percentFormat } from '../engine/template/py-format.js';
import { memberLookup } from '../engine/template/python-methods.js';

test('percentFormat matches CPython for flags, widths and precisions', () => {
  assert.equal(
    percentFormat('%05.1f|%+d|%x|%#x|%e|%g|%g|%g|%10.3e', [3.14159, 5, 255, 255, 12345.678, 0.0001, 1234567, 12.5, 0.000123]),
    '003.1|+5|ff|0xff|1.234568e+04|0.0001|1.23457e+06|12.5| 1.230e-04',
  );
  // CPython rounds exact ties to even; JavaScript's toFixed rounds them up.
  assert.equal(percentFormat('%.2f %.2f %.2f %.0f %.0f', [2.345, 1.005, 0.125, 2.5, 3.5]), '2.35 1.00 0.12 2 4');
  assert.equal(percentFormat('%s', [[1, 'a', null, true]]), "[1, 'a', None, True]");
  assert.equal(percentFormat('%r %s', ["it's", null]), `"it's" None`);
  assert.equal(percentFormat('%(a)s-%(b)05d', { a: 'x', b: 42 }), 'x-00042');
});

test('percentFormat raises the CPython messages', () => {
  assert.throws(() => percentFormat('%s %s', ['a']), { message: 'not enough arguments for format string' });
  assert.throws(() => percentFormat('%s', ['a', 'b']), { message: 'not all arguments converted during string formatting' });
  assert.throws(() => percentFormat('%d', ['x']), { message: '%d format: a real number is required, not str' });
});

test('memberLookup prefers Python methods and falls back to JavaScript members', () => {
  const xs = [1, 2, 3];
  (memberLookup(xs, 'append') as (x: number) => void)(4);
  assert.deepEqual(xs, [1, 2, 3, 4]);
  assert.equal((memberLookup(xs, 'pop') as () => number)(), 4);
  assert.equal(memberLookup(xs, -1), 3);
  assert.equal(memberLookup(xs, 'length'), 3);
  assert.deepEqual((memberLookup('a,b,,c', 'split') as (s: string, n: number) => string[])(',', 2), ['a', 'b', ',c']);
  assert.equal((memberLookup('a-a-a', 'replace') as (a: string, b: string, n: number) => string)('a', 'b', 2), 'b-b-a');
  assert.deepEqual((memberLookup({ a: 1 }, 'items') as () => unknown)(), [['a', 1]]);
  assert.equal(memberLookup(undefined, 'x'), undefined);
  assert.equal(memberLookup({ name: 'n' }, 'name'), 'n');
});

test('rewriteConfigBlocks turns config tags into expressions, keeping whitespace control', () => {
  assert.equal(rewriteConfigBlocks("{% config(materialized='view') %}\nselect 1"), "{{ config(materialized='view') }}\nselect 1");
  assert.equal(
    rewriteConfigBlocks("{%- config(unique_key=['a', 'b'], tags=['x']) -%}\nselect 1"),
    "{{- config(unique_key=['a', 'b'], tags=['x']) -}}\nselect 1",
  );
  assert.equal(rewriteConfigBlocks("{%config( mode='append' )%}"), "{{ config( mode='append' ) }}");
  assert.equal(rewriteConfigBlocks("{{ config(mode='view') }} {% if x %}{% endif %}"), "{{ config(mode='view') }} {% if x %}{% endif %}");
});

test('a rewritten config block renders to nothing and passes its keyword arguments', () => {
  const seen: unknown[] = [];
  const config = (...args: unknown[]): string => {
    seen.push(args[0]);
    return '';
  };
  const src = rewriteConfigBlocks("{%- config(materialized='incremental', unique_key='id') -%}\nselect 1");
  assert.equal(createNunjucksEngine().render('m', src, { config }), 'select 1');
  assert.deepEqual(seen, [{ materialized: 'incremental', unique_key: 'id', __keywords: true }]);
});
