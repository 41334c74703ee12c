/**
 * Secrets never reach a message: passwords inside URLs,
 * `password=` pairs from drivers, and known passwords anywhere (also
 * URL-encoded) become `***`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redact } from '../engine/connections/redact.js';

test('passwords inside URLs are replaced', () => {
  assert.equal(redact('could not connect: postgresql://loader:s3cret@db:5432/x failed'), 'could not connect: postgresql://loader:***@db:5432/x failed');
  assert.equal(redact('postgres://u:p%40ss@h/db and https://git:tok3n@github.com/o/r.git'), 'postgres://u:***@h/db and https://git:***@github.com/o/r.git');
  assert.equal(redact('postgres://user@host/db has no password'), 'postgres://user@host/db has no password');
  assert.equal(redact('duckdb:///tmp/x.duckdb'), 'duckdb:///tmp/x.duckdb');
});

test('password pairs in driver messages are replaced', () => {
  assert.equal(redact('host=db user=u password=hunter2 dbname=x'), 'host=db user=u password=*** dbname=x');
  assert.equal(redact(`password: 'two words' rest`), 'password: *** rest');
  assert.equal(redact('PASSWORD=abc;next'), 'PASSWORD=***;next');
});

test('known secrets are replaced wherever they appear, also URL-encoded', () => {
  assert.equal(redact('auth failed for p@ss:word (p%40ss%3Aword)', ['p@ss:word']), 'auth failed for *** (***)');
  assert.equal(redact('value xy stays', ['xy']), 'value xy stays', 'very short secrets are only redacted in URL and key=value positions');
  assert.equal(redact('nothing to hide', [undefined]), 'nothing to hide');
});
