// Statement splitting and classification and the shared SQL scanner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.js';
import { tokenize } from '../engine/sql/lexer.js';
import { classifyStatement, splitModelSql } from '../engine/sql/split-statements.js';

function splitError(sql: string): EngineError {
  try {
    splitModelSql(sql);
  } catch (err) {
    assert.ok(err instanceof EngineError);
    return err;
  }
  assert.fail(`expected splitModelSql to throw for: ${sql}`);
}

test('A20: pre-statement, query and post-statement', () => {
  const sql =
    'create table if not exists public.audit_log (model varchar, at timestamp);\n' +
    'select 42 as answer;\n' +
    "insert into public.audit_log values ('audit', now());";
  assert.deepEqual(splitModelSql(sql), {
    pre: ['create table if not exists public.audit_log (model varchar, at timestamp)'],
    query: 'select 42 as answer',
    post: ["insert into public.audit_log values ('audit', now())"],
  });
});

test('fast path: no top-level semicolon keeps the whole trimmed text, unclassified', () => {
  assert.deepEqual(splitModelSql('\n  select 1 as a\n\n'), { pre: [], query: 'select 1 as a', post: [] });
  // Not classified: even a non-query passes through when there is no semicolon.
  assert.deepEqual(splitModelSql('  insert into t values (1)  '), { pre: [], query: 'insert into t values (1)', post: [] });
  assert.deepEqual(splitModelSql("select ';' as semi -- ; in a comment\n"), {
    pre: [],
    query: "select ';' as semi -- ; in a comment",
    post: [],
  });
});

test('a single query with a trailing semicolon is the query', () => {
  assert.deepEqual(splitModelSql('select 1;\n'), { pre: [], query: 'select 1', post: [] });
  assert.deepEqual(splitModelSql('select 1;;  ;\n-- done\n'), { pre: [], query: 'select 1', post: [] });
});

test('semicolons inside strings, E-strings, quoted identifiers, dollar quotes and comments do not split', () => {
  const sql = [
    "set search_path = 'a;b''c;d'",
    "select E'it\\'s; fine' as e, \"odd;name\" as q, 'x' as y /* a; /* nested; */ still; */ from t -- tail;\n",
    'create function f() returns int as $fn$ begin; return 1; end; $fn$ language plpgsql',
    'do $$ begin perform 1; end $$',
  ].join(';\n');
  const result = splitModelSql(sql);
  assert.deepEqual(result.pre, ["set search_path = 'a;b''c;d'"]);
  assert.equal(
    result.query,
    "select E'it\\'s; fine' as e, \"odd;name\" as q, 'x' as y /* a; /* nested; */ still; */ from t -- tail;",
  );
  assert.deepEqual(result.post, [
    'create function f() returns int as $fn$ begin; return 1; end; $fn$ language plpgsql',
    'do $$ begin perform 1; end $$',
  ]);
});

test('statements holding only comments or whitespace are dropped', () => {
  const sql = '-- header;\n/* block; */ ;\ndrop table if exists x;\n   ;\nselect 1;\n-- trailer\n';
  assert.deepEqual(splitModelSql(sql), { pre: ['drop table if exists x'], query: 'select 1', post: [] });
});

test('leading comments stay with their statement', () => {
  const sql = '-- make room\ntruncate t;\nselect 1';
  assert.deepEqual(splitModelSql(sql), { pre: ['-- make room\ntruncate t'], query: 'select 1', post: [] });
});

test('query keywords: SELECT, VALUES, TABLE, FROM, parenthesised and commented', () => {
  for (const q of ['values (1), (2)', 'table public.raw', 'from raw select a', '((select 1) union (select 2))', '/* c */ -- x\n select 2']) {
    assert.deepEqual(splitModelSql(`drop table if exists z; ${q};`), { pre: ['drop table if exists z'], query: q, post: [] }, q);
  }
});

test('WITH is a query only when its main statement is a query', () => {
  assert.deepEqual(classifyStatement('WITH x AS (select 1) select * from x'), { kind: 'QUERY', keyword: 'SELECT' });
  assert.deepEqual(classifyStatement('with recursive t(n) as (select 1 union all select n + 1 from t where n < 3) select n from t'), {
    kind: 'QUERY',
    keyword: 'SELECT',
  });
  assert.deepEqual(classifyStatement('WITH a AS MATERIALIZED (delete from t returning *), b AS NOT MATERIALIZED (select 1) select * from a'), {
    kind: 'QUERY',
    keyword: 'SELECT',
  });
  assert.deepEqual(classifyStatement('with x as (select 1) (select * from x)'), { kind: 'QUERY', keyword: 'SELECT' });
  assert.deepEqual(classifyStatement('WITH x AS (select 1) insert into t select * from x'), { kind: 'DML', keyword: 'INSERT' });
  assert.deepEqual(classifyStatement('with x as (select 1) update t set a = 1 from x'), { kind: 'DML', keyword: 'UPDATE' });
  assert.deepEqual(classifyStatement('with x as (select 1) delete from t using x'), { kind: 'DML', keyword: 'DELETE' });
  // A CTE named like a statement keyword is a name, not the main statement.
  assert.deepEqual(classifyStatement('with update as (select 1) select * from update'), { kind: 'QUERY', keyword: 'SELECT' });
});

test('statement kinds for DDL, DML and OTHER', () => {
  for (const kw of ['CREATE', 'ALTER', 'DROP', 'TRUNCATE', 'COMMENT', 'GRANT', 'REVOKE']) {
    assert.deepEqual(classifyStatement(`${kw.toLowerCase()} something`), { kind: 'DDL', keyword: kw });
  }
  for (const kw of ['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']) {
    assert.deepEqual(classifyStatement(`  ${kw.toLowerCase()} something`), { kind: 'DML', keyword: kw });
  }
  assert.deepEqual(classifyStatement('create table t as select 1'), { kind: 'DDL', keyword: 'CREATE' });
  assert.deepEqual(classifyStatement('set work_mem = 1'), { kind: 'OTHER', keyword: 'SET' });
  assert.deepEqual(classifyStatement('analyze t'), { kind: 'OTHER', keyword: 'ANALYZE' });
});

test('error: no SQL statements found', () => {
  const err = splitError(' ; -- nothing\n ; /* here */');
  assert.equal(err.code, 'compile');
  assert.equal(err.message, 'no SQL statements found');
});

test('error: a single non-query statement names its kind and keyword', () => {
  assert.equal(
    splitError('WITH x AS (select 1) insert into t select * from x;').message,
    'model file contains a single DML statement (INSERT), expected a SELECT query',
  );
  assert.equal(
    splitError('create table t as select 1;').message,
    'model file contains a single DDL statement (CREATE), expected a SELECT query',
  );
  assert.equal(splitError('vacuum;').message, 'model file contains a single OTHER statement (VACUUM), expected a SELECT query');
});

test('error: no query among several statements', () => {
  assert.equal(
    splitError('create table a (x int); insert into a values (1); drop table b').message,
    'no SELECT query found in model file; found 3 statements but none are queries',
  );
});

test('error: more than one query', () => {
  const err = splitError('select 1; select 2;');
  assert.equal(err.code, 'compile');
  assert.equal(err.message, 'found 2 SELECT queries in model file; expected exactly 1');
  assert.equal(splitError('select 1; with x as (select 1) select 2; values (3)').message, 'found 3 SELECT queries in model file; expected exactly 1');
});

test('lexer: token kinds and protected regions', () => {
  const sql = `a.b "q""x" 'it''s' E'\\'' $t$ $x$ ; $t$ $1 -- c\n/* /* n */ */ {# j #}; x$y$`;
  const kinds = tokenize(sql).map((t) => [t.kind, sql.slice(t.start, t.end)]);
  assert.deepEqual(kinds, [
    ['word', 'a'],
    ['punct', '.'],
    ['word', 'b'],
    ['quoted', '"q""x"'],
    ['string', "'it''s'"],
    ['string', "E'\\''"],
    ['string', '$t$ $x$ ; $t$'],
    ['punct', '$'],
    ['word', '1'],
    ['comment', '-- c'],
    ['comment', '/* /* n */ */'],
    ['punct', '{'],
    ['punct', '#'],
    ['word', 'j'],
    ['punct', '#'],
    ['punct', '}'],
    ['punct', ';'],
    ['word', 'x$y$'],
  ]);
  const jinja = tokenize('{# don\'t #} @a', { jinjaComments: true });
  assert.deepEqual(jinja.map((t) => t.kind), ['comment', 'punct', 'word']);
});

test('lexer: unterminated strings and comments protect the rest of the text', () => {
  for (const sql of ["select 'open; select 2", 'select 1 /* open; select 2', 'select $$ open; select 2', 'select "open; x']) {
    assert.deepEqual(splitModelSql(sql), { pre: [], query: sql, post: [] }, sql);
  }
});

test('lexer: splits a large input (200,000 statements)', () => {
  // Speed is measured in bench/; here only the result on a big input is checked.
  const sql = "insert into t values ('a;b');\n".repeat(100_000) + 'select 1;\n' + 'delete from t;\n'.repeat(100_000);
  const result = splitModelSql(sql);
  assert.equal(result.pre.length, 100_000);
  assert.equal(result.query, 'select 1');
  assert.equal(result.post.length, 100_000);
});
