// Query files: the documented example verbatim, the header rules
// with line and column, statement splitting outside quotes, comments and
// dollar quotes, and the connection-kind check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionKind } from '../engine/connections/connection.js';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';

const CONNECTIONS: Record<string, ConnectionKind> = { WAREHOUSE: 'database', EXPORTS: 'file' };
const ctx = (connections: Record<string, ConnectionKind> = {}): JobFileContext => ({ fileExists: () => false, connectionKind: (n) => connections[n] });

type Row = [path: string, message: string, line?: number, column?: number];
const problems = (text: string, c = ctx()): Row[] => validateJobFile('q.sql', text, c).problems.map((p) => [p.path, p.message, p.line, p.column]);

function statements(text: string): [string, number][] {
  const r = validateJobFile('q.sql', text, ctx());
  assert.deepEqual(r.problems, []);
  assert.ok(r.kind === 'query' && r.parsed !== undefined);
  return r.parsed.statements.map((s) => [s.text, s.line]);
}

test('the documented query-file example is valid: one statement on WAREHOUSE', () => {
  const text = '-- connection: WAREHOUSE\n-- Rebuild the reporting view.\ncreate or replace view reporting.active_users as\nselect * from public.users where active;\n';
  const r = validateJobFile('queries/refresh.sql', text, ctx(CONNECTIONS));
  assert.deepEqual(r, {
    kind: 'query',
    problems: [],
    parsed: {
      kind: 'query',
      connection: 'WAREHOUSE',
      statements: [{ text: 'create or replace view reporting.active_users as\nselect * from public.users where active', line: 3 }],
    },
  });
});

test('connection is declared more than once: one problem per extra line', () => {
  assert.deepEqual(problems('-- connection: A\n\n  -- connection: B\n-- connection: A\nselect 1\n'), [
    ['', 'connection is declared more than once', 3, 3],
    ['', 'connection is declared more than once', 4, 1],
  ]);
});

test('invalid connection name, at the name', () => {
  assert.deepEqual(problems('-- connection: 1warehouse\nselect 1\n'), [['', 'invalid connection name "1warehouse"', 1, 16]]);
  assert.deepEqual(problems('--connection:my-db\nselect 1\n'), [['', 'invalid connection name "my-db"', 1, 14]]);
  assert.deepEqual(problems(`-- connection: ${'A'.repeat(65)}\nselect 1\n`), [['', `invalid connection name "${'A'.repeat(65)}"`, 1, 16]]);
});

test('query file has no SQL statements', () => {
  for (const body of ['', ';\n', '-- only a comment\n', '/* block */ ; ;\n']) {
    assert.deepEqual(problems(`-- connection: W\n${body}`), [['', 'query file has no SQL statements', undefined, undefined]], JSON.stringify(body));
  }
});

test('the connection must be a database connection when it is defined', () => {
  assert.deepEqual(problems('-- connection: EXPORTS\nselect 1\n', ctx(CONNECTIONS)), [['', 'query connection EXPORTS must be a database connection', 1, 16]]);
  assert.deepEqual(problems('-- connection: NOT_YET\nselect 1\n', ctx(CONNECTIONS)), []);
});

test('statements split on ; outside quotes, comments and dollar quotes', () => {
  const text = [
    '-- connection: WAREHOUSE',
    "insert into t values ('a;b', \"c;d\");",
    '-- a comment; still a comment',
    '/* block ; comment */',
    'create function f() returns int as $body$ select 1; $body$ language sql;',
    "select E'x\\';y', $$;$$",
    ';;',
    'select ${START_DATE}',
  ].join('\n');
  assert.deepEqual(statements(text), [
    ["insert into t values ('a;b', \"c;d\")", 2],
    ['create function f() returns int as $body$ select 1; $body$ language sql', 5],
    ["select E'x\\';y', $$;$$", 6],
    ['select ${START_DATE}', 8],
  ]);
});
