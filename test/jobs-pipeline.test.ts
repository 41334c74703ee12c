// Pipeline files: the documented examples verbatim,
// every row of the pipeline validation rules with its path and position, type detection
// from the naming keys, per-type keys and requirements, expressions and
// templates, referenced files and connection kinds, and the parsed model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionKind } from '../engine/connections/connection.js';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import { stepId, type BuildStep, type GroupStep, type PipelineFile } from '../engine/jobs/pipeline-model.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';

const CONNECTIONS: Record<string, ConnectionKind> = { WAREHOUSE: 'database', LAKE: 'database', EXPORTS: 'file' };
const FILES: Record<string, string> = {
  'replications/users.yaml': 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users: {object: main.users}\n',
  'notes/readme.yaml': 'title: not a job\n',
  'queries/a.sql': 'select 1',
  models: '',
  'projects/shop': '',
};

function ctx(withRead = true): JobFileContext {
  const c: JobFileContext = { fileExists: (p) => p in FILES, connectionKind: (n) => CONNECTIONS[n] };
  return withRead ? { ...c, readFile: (p) => FILES[p] } : c;
}

type Row = [path: string, message: string, line?: number, column?: number];

function problems(text: string, c: JobFileContext = ctx()): Row[] {
  return validateJobFile('p.yaml', text, c).problems.map((p) => [p.path, p.message, p.line, p.column]);
}

function parsed(text: string): PipelineFile {
  const r = validateJobFile('p.yaml', text, ctx());
  assert.deepEqual(r.problems, []);
  assert.ok(r.kind === 'pipeline' && r.parsed !== undefined);
  return r.parsed;
}

/** `steps:` with each step given as its lines (first line gets the dash). */
function steps(...list: string[][]): string {
  return `steps:\n${list.map((lines) => lines.map((l, i) => `${i === 0 ? '  - ' : '    '}${l}\n`).join('')).join('')}`;
}

const SPEC_EXAMPLE = `env:
  NOTIFY_URL: '\${NOTIFY_URL}'    # from run/job vars, env files or the process environment
steps:
  - id: load
    type: replication
    path: replications/users.yaml
  - id: transform
    build: models
    prod: true
  - check: state.transform.failed == 0
    failure_message: 'build failed for {state.transform.failed} models'
  - id: each
    type: group
    loop: ['public.users', 'public.orders']
    concurrency: 2
    steps:
      - id: q
        type: query
        connection: WAREHOUSE
        query: 'analyze {loop.value}'
  - id: notify
    type: http
    url: '{env.NOTIFY_URL}'
    method: POST
    payload: {rows: '{state.load.rows}'}
    on_failure: warn
  - log: 'done: {state.load.rows} rows'
`;

test('the documented pipeline example is valid and parses into typed steps', () => {
  const f = parsed(SPEC_EXAMPLE);
  assert.deepEqual(f.env, { NOTIFY_URL: '${NOTIFY_URL}' });
  assert.deepEqual(f.steps.map((s) => [s.type, stepId(s)]), [
    ['replication', 'load'], ['build', 'transform'], ['check', 'step_3'], ['group', 'each'], ['http', 'notify'], ['log', 'step_6'],
  ]);
  const build = f.steps[1] as BuildStep;
  assert.deepEqual({ build: build.build, command: build.command, prod: build.prod }, { build: 'models', command: 'run', prod: true });
  const group = f.steps[3] as GroupStep;
  assert.deepEqual(group.loop, ['public.users', 'public.orders']);
  assert.equal(group.concurrency, 2);
  assert.deepEqual(group.steps[0], { type: 'query', connection: 'WAREHOUSE', query: 'analyze {loop.value}', position: 1, on_failure: 'abort', id: 'q' });
  assert.deepEqual(f.steps[4], {
    type: 'http', url: '{env.NOTIFY_URL}', method: 'POST', timeout: 30, payload: { rows: '{state.load.rows}' },
    position: 5, on_failure: 'warn', id: 'notify',
  });
  assert.deepEqual(f.steps[5], { type: 'log', message: 'done: {state.load.rows} rows', level: 'info', position: 6, on_failure: 'abort' });
});

test('canonical use is valid', () => {
  const f = parsed("steps:\n  - id: transform\n    build: models\n    prod: true\n  - check: state.transform.failed == 0\n  - log: 'build ok={state.transform.ok}'\n");
  assert.deepEqual(f.steps.map((s) => s.type), ['build', 'check', 'log']);
});

test('steps: required, a non-empty list, of mappings', () => {
  assert.deepEqual(validateJobFile('p.yaml', 'env: {}\n', ctx(), { as: 'pipeline' }).problems, [{ path: '', message: '"steps" is required', line: 1, column: 1 }]);
  assert.deepEqual(problems('steps: []\n'), [['steps', '"steps" must be a non-empty list', 1, 8]]);
  assert.deepEqual(problems('steps:\n'), [['steps', '"steps" must be a non-empty list', 1, 1]]);
  assert.deepEqual(problems('steps: {log: x}\n'), [['steps', '"steps" must be a non-empty list', 1, 8]]);
  assert.deepEqual(problems('steps:\n  - log: x\n  - just text\n  - [a]\n'), [
    ['steps[1]', 'step must be a mapping', 3, 5],
    ['steps[2]', 'step must be a mapping', 4, 5],
  ]);
  assert.deepEqual(problems('steps:\n  - log: x\nother: 1\n'), [['other', 'unknown key "other"', 3, 1]]);
});

test('step type: explicit, or named by exactly one of log, check, build, command, query', () => {
  assert.deepEqual(problems(steps(['type: loop', 'steps: []'])), [['steps[0].type', 'unknown step type "loop"', 2, 11]]);
  assert.deepEqual(problems(steps(['type: 5'])), [['steps[0].type', 'unknown step type "5"', 2, 11]]);
  assert.deepEqual(problems(steps(['id: a', 'url: http://x'])), [['steps[0]', 'step type cannot be determined; set "type"', 2, 5]]);
  assert.deepEqual(problems(steps(['log: a', 'check: "true"'])), [['steps[0]', 'step type cannot be determined; set "type"', 2, 5]]);
  const f = parsed(steps(['command: [ls, -l]'], ['query: select 1', 'connection: WAREHOUSE'], ['build: models', 'command: test'], ['check: "true"'], ['log: hi']));
  assert.deepEqual(f.steps.map((s) => s.type), ['command', 'query', 'build', 'check', 'log']);
  assert.equal((f.steps[2] as BuildStep).command, 'test', 'a build key wins over command');
});

test('keys must be known for the step type', () => {
  assert.deepEqual(problems(steps(['log: hi', 'url: x', 'Level: warn'])), [
    ['steps[0].url', 'unknown key "url" for step type log', 3, 5],
    ['steps[0].Level', 'unknown key "Level" for step type log', 4, 5],
  ]);
  assert.deepEqual(problems(steps(['type: read', 'from: file://queries/a.sql', 'to: x'])), [['steps[0].to', 'unknown key "to" for step type read', 4, 5]]);
});

test('required keys per type', () => {
  const cases: [string[], string][] = [
    [['type: log'], 'step type log requires "message"'],
    [['type: replication'], 'step type replication requires "path"'],
    [['type: query', 'query: select 1'], 'step type query requires "connection"'],
    [['type: query', 'connection: W'], 'step type query requires "query"'],
    [['type: build'], 'step type build requires "build"'],
    [['type: http'], 'step type http requires "url"'],
    [['type: command'], 'step type command requires "command"'],
    [['type: check'], 'step type check requires "check"'],
    [['type: group'], 'step type group requires "steps"'],
    [['type: write', 'content: x'], 'step type write requires "to"'],
    [['type: write', 'to: EXPORTS/a.txt'], 'step type write requires "content"'],
    [['type: read'], 'step type read requires "from"'],
    [['type: set'], 'step type set requires "key"'],
    [['type: set', 'key: k'], 'step type set requires "value"'],
  ];
  for (const [lines, message] of cases) assert.deepEqual(problems(steps(lines)), [['steps[0]', message, 2, 5]], message);
  assert.deepEqual(problems(steps(['type: log', 'message:'])), [['steps[0]', 'step type log requires "message"', 2, 5]], 'null is missing');
});

test('set step forms: key + value, map, key + delete: true', () => {
  assert.deepEqual(problems(steps(['type: set', 'key: a', 'value: 1'], ['type: set', 'map: {a: 1}'], ['type: set', 'key: a', 'delete: true'], ['type: set', 'key: a', 'value: ~'])), []);
  assert.deepEqual(problems(steps(['type: set', 'key: a', 'delete: false'])), [['steps[0]', 'step type set requires "value"', 2, 5]]);
  assert.deepEqual(problems(steps(['type: set', 'map: {a: 1}', 'key: b'])), [['steps[0].key', '"map" and "key" cannot be combined', 4, 5]]);
});

test('step ids: well-formed and unique in the whole file', () => {
  const text = steps(['id: 1st', 'log: a'], ['id: ok', 'log: b'], ['id: each', 'type: group', 'steps: [{id: ok, log: c}, {id: x-y, log: d}]']);
  assert.deepEqual(problems(text), [
    ['steps[0].id', 'invalid step id "1st"', 2, 9],
    ['steps[2].steps[0].id', 'duplicate step id "ok"', 8, 18],
    ['steps[2].steps[1].id', 'invalid step id "x-y"', 8, 36],
  ]);
});

test('goto targets a step at the same level', () => {
  const text = steps(['id: a', 'log: x', 'goto: c'], ['id: g', 'type: group', 'steps: [{id: inner, log: y, goto: a}, {log: z, goto: inner}]'], ['id: c', 'log: w', 'goto: a']);
  assert.deepEqual(problems(text), [['steps[1].steps[0].goto', 'goto target "a" does not exist', 7, 39]]);
  assert.deepEqual(problems(steps(['log: x', 'goto: nowhere'])), [['steps[0].goto', 'goto target "nowhere" does not exist', 3, 11]]);
});

test('enums: on_failure, level, method, build command', () => {
  const text = steps(['log: x', 'level: loud', 'on_failure: ignore'], ['type: http', 'url: http://x', 'method: get'], ['build: models', 'command: seed']);
  assert.deepEqual(problems(text), [
    ['steps[0].level', 'level must be one of debug, info, warn, error', 3, 12],
    ['steps[0].on_failure', 'on_failure must be one of abort, warn, quiet, break, retry', 4, 17],
    ['steps[1].method', 'method must be one of GET, POST, PUT, PATCH, DELETE, HEAD', 7, 13],
    ['steps[2].command', 'command must be one of run, test, compile, list', 9, 14],
  ]);
});

test('expressions in if, check and loop must parse, with known functions', () => {
  const text = steps(['log: x', 'if: state.a.rows >'], ['check: foo(1)'], ['type: group', 'loop: "split(env.LIST, \',\'"', 'steps: [{log: y}]'], ['log: z', 'if: true'], ['check: "upper(env.A) == \'B\'"']);
  assert.deepEqual(problems(text), [
    ['steps[0].if', 'invalid expression: unexpected end of expression at 14', 3, 9],
    ['steps[1].check', 'unknown function "foo"', 4, 12],
    ['steps[2].loop', 'invalid expression: unexpected end of expression at 19', 6, 11],
  ]);
  assert.deepEqual(problems(steps(['log: x', 'if: [a]'])), [['steps[0].if', '"if" must be an expression', 3, 9]]);
  assert.deepEqual(problems(steps(['type: group', 'loop: 5', 'steps: [{log: y}]'])), [['steps[0].loop', '"loop" must be a list or an expression', 3, 11]]);
});

test('a loop written as one {…} template is read as its expression', () => {
  assert.deepEqual(problems(steps(['type: group', "loop: '{store.tables}'", 'steps: [{log: y}]'])), []);
  assert.deepEqual(problems(steps(['type: group', "loop: '{store.tables +}'", 'steps: [{log: y}]'])), [
    ['steps[0].loop', 'invalid expression: unexpected end of expression at 14', 3, 11],
  ]);
});

test('templates in step strings must parse, at any depth; other braces are text', () => {
  const text = steps(
    ['log: "rows {state.load.rows +}"'],
    ['type: http', 'url: http://x', 'payload: {a: [1, "{upper(env.A}"], sql: "select {x}"}', 'headers: {X-Run: "{execution.exec_id}"}'],
    ['type: query', 'connection: WAREHOUSE', "query: 'select ''{\"a\": 1}''::json, {loop.value]}'"],
  );
  assert.deepEqual(problems(text), [
    ['steps[0].log', 'invalid expression: unexpected end of expression at 17', 2, 10],
    ['steps[1].payload.a[1]', 'invalid expression: unexpected end of expression at 11', 5, 22],
    ['steps[2].query', 'invalid expression: unexpected token "]" at 10', 9, 12],
  ]);
});

test('referenced files exist: replication path, build directory, file:// values', () => {
  const text = steps(
    ['type: replication', 'path: replications/nope.yaml'],
    ['build: file://nope'],
    ['type: query', 'connection: WAREHOUSE', 'query: file://queries/missing.sql'],
    ['type: read', 'from: file://queries/a.sql'],
    ['type: read', 'from: file://queries/b.sql'],
    ['build: projects/shop/'],
  );
  assert.deepEqual(problems(text), [
    ['steps[0].path', 'file "replications/nope.yaml" does not exist', 3, 11],
    ['steps[1].build', 'file "nope" does not exist', 4, 12],
    ['steps[2].query', 'file "queries/missing.sql" does not exist', 7, 12],
    ['steps[4].from', 'file "queries/b.sql" does not exist', 11, 11],
  ]);
});

test('a replication step path must be a replication file (when the caller can read files)', () => {
  const text = steps(['type: replication', 'path: notes/readme.yaml'], ['type: replication', 'path: queries/a.sql']);
  assert.deepEqual(problems(text), [
    ['steps[0].path', '"notes/readme.yaml" is not a replication file', 3, 11],
    ['steps[1].path', '"queries/a.sql" is not a replication file', 5, 11],
  ]);
  assert.deepEqual(problems(text, ctx(false)), [], 'without readFile only existence is checked');
});

test('replication step: streams list, mode, vars', () => {
  const text = steps(['type: replication', 'path: replications/users.yaml', 'streams: public.users', 'mode: merge', 'vars: [1]']);
  assert.deepEqual(problems(text), [
    ['steps[0].streams', '"streams" must be a list of strings', 4, 14],
    ['steps[0].mode', 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill', 5, 11],
    ['steps[0].vars', '"vars" must be a mapping', 6, 11],
  ]);
});

test('ranges: concurrency 1–16, timeout ≥ 1', () => {
  const text = steps(['type: group', 'concurrency: 17', 'steps: [{log: a}]'], ['type: http', 'url: http://x', 'timeout: 0'], ['command: ls', 'timeout: 1.5']);
  assert.deepEqual(problems(text), [
    ['steps[0].concurrency', '"concurrency" must be between 1 and 16', 3, 18],
    ['steps[1].timeout', '"timeout" must be between 1 and 2147483', 7, 14],
    ['steps[2].timeout', '"timeout" must be an integer', 9, 14],
  ]);
});

test('build step keys', () => {
  const text = steps(['id: b', 'build: models', 'prod: true', 'schema: dev_me'], ['build: models', 'command: run', 'test: true'], ['build: models', 'range: "2025-01-01"', 'threads: x', 'select: [1]']);
  assert.deepEqual(problems(text), [
    ['steps[0].schema', '"prod" and "schema" cannot be combined', 5, 5],
    ['steps[1].test', "build step: 'test: true' conflicts with command 'run'", 8, 5],
    ['steps[2].range', '"range" must be "start,end[,step]"', 10, 12],
    ['steps[2].threads', '"threads" must be an integer', 11, 14],
    ['steps[2].select', '"select" must be a string or a list of strings', 12, 13],
  ]);
  const f = parsed(steps(['build: models', 'test: true', 'select: "a, tag:x,a"', 'exclude: [b, "c,d"]', 'vars: {k: {n: 1}}', 'env: {X: 1}', 'prod: false', 'schema: s', 'threads: 0', 'full_refresh: true', 'fail_fast: true', 'no_seeds: true', 'recursive: true', 'range: "2025-01-01,2025-02-01,1d"', 'target: LAKE']));
  assert.deepEqual(f.steps[0], {
    type: 'build', build: 'models', command: 'test', target: 'LAKE', select: ['a', 'tag:x'], exclude: ['b', 'c', 'd'],
    vars: { k: { n: 1 } }, env: { X: 1 }, schema: 's', prod: false, full_refresh: true, no_seeds: true,
    range: '2025-01-01,2025-02-01,1d', fail_fast: true, threads: 0, recursive: true, position: 1, on_failure: 'abort',
  });
});

test('connection kinds are checked when the connection is defined', () => {
  const text = steps(['type: query', 'connection: EXPORTS', 'query: select 1'], ['type: write', 'to: WAREHOUSE/out.txt', 'content: x'], ['type: read', 'from: LAKE/in.txt'], ['type: write', 'to: nopath', 'content: x']);
  assert.deepEqual(problems(text), [
    ['steps[0].connection', 'query connection EXPORTS must be a database connection', 3, 17],
    ['steps[1].to', 'write connection WAREHOUSE must be a file connection', 6, 9],
    ['steps[2].from', 'read connection LAKE must be a file connection', 9, 11],
    ['steps[3].to', '"to" must be CONNECTION/path', 11, 9],
  ]);
  const later = steps(['type: query', 'connection: LATER', 'query: x'], ['type: write', 'to: LATER/a', 'content: x'], ['type: query', 'connection: "{env.DB}"', 'query: x']);
  assert.deepEqual(problems(later), [], 'undefined or templated connections wait for the run');
});

test('http and command value shapes', () => {
  const text = steps(['type: http', 'url: http://x', 'payload: 5', 'headers: {A: 1}'], ['command: {a: 1}']);
  assert.deepEqual(problems(text), [
    ['steps[0].payload', '"payload" must be a string or a mapping', 4, 14],
    ['steps[0].headers.A', '"A" must be a string', 5, 18],
    ['steps[1].command', '"command" must be a list of strings', 6, 14],
  ]);
});

test('file:// inside env and vars values is data, not a project file', () => {
  assert.deepEqual(problems('env:\n  OUT: file:///srv/out\n' + steps(['command: ls', 'env: {DIR: "file:///tmp"}'])), []);
});

test('the model keeps common keys and positions; nested steps are numbered among their siblings', () => {
  const f = parsed(steps(['name: first', 'log: a', "if: env.RUN == 'yes'", 'on_failure: quiet'], ['id: g', 'type: group', 'steps: [{log: b}, {id: c, log: c, goto: c}]']));
  assert.deepEqual(f.steps[0], { type: 'log', message: 'a', level: 'info', position: 1, on_failure: 'quiet', name: 'first', if: "env.RUN == 'yes'" });
  const g = f.steps[1] as GroupStep;
  assert.deepEqual(g.steps.map((s) => [stepId(s), s.position, s.goto]), [['step_1', 1, undefined], ['c', 2, 'c']]);
  assert.equal(g.concurrency, 1);
});
