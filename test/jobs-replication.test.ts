// Replication files: the documented examples verbatim, every row of
// the "Replication validation" table with its path and position, the checks
// that wait for a defined connection, the defaults merge and the job-save
// stream matching used by job saves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionKind } from '../engine/connections/connection.js';
import type { JobFileContext } from '../engine/jobs/job-file-context.js';
import {
  effectiveSettings, streamKeys, streamMatches, type ReplicationFile,
} from '../engine/jobs/replication-model.js';
import { validateJobFile } from '../engine/jobs/validate-job-file.js';

const CONNECTIONS: Record<string, ConnectionKind> = { WAREHOUSE: 'database', LAKE: 'database', EXPORTS: 'file', ODD: 'unsupported' };

function ctx(connections: Record<string, ConnectionKind> = {}, files: readonly string[] = []): JobFileContext {
  return { fileExists: (p) => files.includes(p), connectionKind: (n) => connections[n] };
}

type Row = [path: string, message: string, line?: number, column?: number];

function problems(text: string, c: JobFileContext = ctx()): Row[] {
  return validateJobFile('r.yaml', text, c).problems.map((p) => [p.path, p.message, p.line, p.column]);
}

function parsed(text: string, c: JobFileContext = ctx()): ReplicationFile {
  const r = validateJobFile('r.yaml', text, c);
  assert.deepEqual(r.problems, []);
  assert.ok(r.kind === 'replication' && r.parsed !== undefined);
  return r.parsed;
}

/** A one-stream file around `stream` lines (indented by 4). */
function oneStream(stream: string[], head = 'source: WAREHOUSE\ntarget: LAKE\n', key = 'public.users'): string {
  return `${head}streams:\n  ${key}:\n${stream.map((l) => `    ${l}\n`).join('')}`;
}

const SPEC_EXAMPLE = `source: WAREHOUSE
target: LAKE
defaults:
  mode: full-refresh
  object: '{target_schema}.{stream_schema}_{stream_table}'
streams:
  public.*:                      # every table of schema public
  public.users:                  # explicit key wins over the wildcard for this table
    mode: incremental
    primary_key: [id]
    update_key: updated_at
    select: [-password_hash]
  sales.orders:
    where: "status <> 'void'"
  daily_revenue:                 # custom SQL stream
    sql: file://queries/daily_revenue.sql
    object: main.daily_revenue
env:
  START: '2025-01-01'
`;

test('the documented replication example is valid and parses into the model', () => {
  const f = parsed(SPEC_EXAMPLE, ctx(CONNECTIONS, ['queries/daily_revenue.sql']));
  assert.equal(f.source, 'WAREHOUSE');
  assert.equal(f.target, 'LAKE');
  assert.deepEqual(f.defaults, { mode: 'full-refresh', object: '{target_schema}.{stream_schema}_{stream_table}' });
  assert.deepEqual(streamKeys(f), ['public.*', 'public.users', 'sales.orders', 'daily_revenue']);
  assert.deepEqual(f.streams[1]!.settings, { mode: 'incremental', primary_key: ['id'], update_key: 'updated_at', select: ['-password_hash'] });
  assert.deepEqual(f.streams[3]!.settings, { sql: 'file://queries/daily_revenue.sql', object: 'main.daily_revenue' });
  assert.deepEqual(f.env, { START: '2025-01-01' });
});

test('the file-save request body U is valid', () => {
  const u = "source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  object: '{target_schema}.{stream_table}'\nstreams:\n  public.users:\n    mode: full-refresh\n";
  assert.equal(Buffer.byteLength(u), 132);
  assert.equal(parsed(u, ctx(CONNECTIONS)).streams[0]!.settings.mode, 'full-refresh');
});

test('#9: unknown mode, exact problem', () => {
  const body = 'source: WAREHOUSE\ntarget: LAKE\nstreams:\n  public.users:\n    object: main.users\n    mode: merge\n';
  assert.deepEqual(validateJobFile('replications/merge.yaml', body, ctx(CONNECTIONS)).problems, [
    { path: 'streams["public.users"].mode', message: 'unknown mode "merge"; expected one of full-refresh, incremental, truncate, snapshot, backfill', line: 6, column: 11 },
  ]);
});

test('source and target are required; streams is required when validated as a replication', () => {
  assert.deepEqual(problems('streams:\n  a.b: {object: x.y}\n'), [
    ['', '"source" is required', 1, 1],
    ['', '"target" is required', 1, 1],
  ]);
  assert.deepEqual(validateJobFile('r.yaml', 'source: A\ntarget: B\n', ctx(), { as: 'replication' }).problems, [
    { path: '', message: '"streams" is required', line: 1, column: 1 },
  ]);
});

test('source and target must be non-empty strings', () => {
  assert.deepEqual(problems('source: ""\ntarget: [a]\nstreams:\n  a.b: {object: x.y}\n'), [
    ['source', '"source" must be a connection name', 1, 9],
    ['target', '"target" must be a connection name', 2, 9],
  ]);
  assert.deepEqual(problems('source:\ntarget: 5\nstreams:\n  a.b: {object: x.y}\n'), [
    ['source', '"source" must be a connection name', 1, 1],
    ['target', '"target" must be a connection name', 2, 9],
  ]);
});

test('streams must be a non-empty mapping', () => {
  assert.deepEqual(problems('source: A\ntarget: B\nstreams: {}\n'), [['streams', '"streams" must contain at least one stream', 3, 10]]);
  assert.deepEqual(problems('source: A\ntarget: B\nstreams:\n'), [['streams', '"streams" must contain at least one stream', 3, 1]]);
  assert.deepEqual(problems('source: A\ntarget: B\nstreams: [a.b]\n'), [['streams', '"streams" must be a mapping', 3, 10]]);
});

test('a stream value may be empty; any other non-mapping is a problem', () => {
  assert.deepEqual(problems('source: A\ntarget: B\ndefaults: {object: x.y}\nstreams:\n  a.b:\n  a.c: ~\n  a.d: full\n'), [
    ['streams["a.d"]', '"a.d" must be a mapping', 7, 8],
  ]);
});

test('value types: boolean, integer, string, list', () => {
  const text = oneStream([
    'object: main.users',
    'disabled: yes',
    'update_key: [a]',
    'select: id',
    'primary_key: {a: 1}',
    'description: 5',
    'source_options: {limit: 1.5, header: "true", delimiter: ";;"}',
    'target_options: {add_new_columns: 0}',
    'defaults: 1',
  ]);
  assert.deepEqual(problems(text), [
    ['streams["public.users"].disabled', '"disabled" must be a boolean', 6, 15],
    ['streams["public.users"].update_key', '"update_key" must be a string', 7, 17],
    ['streams["public.users"].select', '"select" must be a list of strings', 8, 13],
    ['streams["public.users"].primary_key', '"primary_key" must be a string or a list of strings', 9, 18],
    ['streams["public.users"].description', '"description" must be a string', 10, 18],
    ['streams["public.users"].source_options.limit', '"limit" must be an integer', 11, 29],
    ['streams["public.users"].source_options.header', '"header" must be a boolean', 11, 42],
    ['streams["public.users"].source_options.delimiter', '"delimiter" must be a single character', 11, 61],
    ['streams["public.users"].target_options.add_new_columns', '"add_new_columns" must be a boolean', 12, 39],
    ['streams["public.users"].defaults', 'unknown key "defaults"', 13, 5],
  ]);
  assert.deepEqual(problems('source: A\ntarget: B\ndefaults: [1]\nstreams:\n  a.b: {object: x.y}\nenv: {A: [1], B: 2, C: true}\n'), [
    ['defaults', '"defaults" must be a mapping', 3, 11],
    ['env.A', '"A" must be a string, number or boolean', 6, 10],
  ]);
});

test('incremental from a database source needs primary_key and/or update_key', () => {
  const text = oneStream(['object: main.users', 'mode: incremental']);
  assert.deepEqual(problems(text, ctx(CONNECTIONS)), [['streams["public.users"].mode', 'mode incremental requires primary_key and/or update_key', 6, 11]]);
  assert.deepEqual(problems(text), [], 'source not defined at save time: checked when the run starts');
  assert.deepEqual(problems(oneStream(['object: a', 'mode: incremental'], 'source: EXPORTS\ntarget: LAKE\n'), ctx(CONNECTIONS)), [], 'file sources need no keys');
  assert.deepEqual(problems(oneStream(['object: a', 'mode: incremental', 'update_key: ts']), ctx(CONNECTIONS)), []);
  const fromDefaults = 'source: WAREHOUSE\ntarget: LAKE\ndefaults:\n  mode: incremental\n  object: a.b\nstreams:\n  public.a:\n  public.b: {primary_key: id}\n';
  assert.deepEqual(problems(fromDefaults, ctx(CONNECTIONS)), [['streams["public.a"]', 'mode incremental requires primary_key and/or update_key', 7, 3]]);
});

test('the mode defaults to incremental when a key is set, else full-refresh', () => {
  assert.equal(effectiveSettings({}, { primary_key: ['id'] }).mode, 'incremental');
  assert.equal(effectiveSettings({ update_key: 'ts' }, {}).mode, 'incremental');
  assert.equal(effectiveSettings({}, {}).mode, 'full-refresh');
  assert.equal(effectiveSettings({ mode: 'truncate' }, { primary_key: ['id'] }).mode, 'truncate');
});

test('stream values replace defaults; option maps merge key by key', () => {
  const eff = effectiveSettings(
    { object: 'a.{stream_table}', select: ['a'], source_options: { header: false, delimiter: ';' }, target_options: { batch_limit: 5 } },
    { select: ['b'], source_options: { delimiter: '|' } },
  );
  assert.deepEqual(eff, {
    object: 'a.{stream_table}',
    select: ['b'],
    mode: 'full-refresh',
    source_options: { header: false, delimiter: '|' },
    target_options: { batch_limit: 5 },
  });
});

test('backfill needs primary_key, update_key and source_options.range', () => {
  const msg = 'mode backfill requires primary_key, update_key and source_options.range';
  assert.deepEqual(problems(oneStream(['object: a.b', 'mode: backfill', 'primary_key: id', 'update_key: ts'])), [['streams["public.users"].mode', msg, 6, 11]]);
  assert.deepEqual(problems(oneStream(['object: a.b', 'mode: backfill', 'update_key: ts', 'source_options: {range: "1,5"}'])), [['streams["public.users"].mode', msg, 6, 11]]);
  const ok = 'source: A\ntarget: B\ndefaults:\n  source_options: {range: "2025-01-01,2025-02-01"}\nstreams:\n  a.b: {object: x.y, mode: backfill, primary_key: [id], update_key: ts}\n';
  assert.deepEqual(problems(ok), [], 'range from defaults');
});

test('source_options.range must be "start,end"', () => {
  for (const bad of ['"2025-01-01"', '"a,b,c"', '",b"']) {
    assert.deepEqual(problems(oneStream(['object: a.b', `source_options: {range: ${bad}}`])), [
      ['streams["public.users"].source_options.range', 'source_options.range must be "start,end"', 6, 29],
    ], bad);
  }
  assert.deepEqual(
    problems(oneStream(['object: a.b', 'mode: backfill', 'primary_key: id', 'update_key: ts', 'source_options: {range: "x"}'])),
    [['streams["public.users"].source_options.range', 'source_options.range must be "start,end"', 9, 29]],
    'a malformed range is not also reported as missing',
  );
});

test('object is required on the stream or in defaults', () => {
  assert.deepEqual(problems('source: A\ntarget: B\nstreams:\n  a.b:\n  a.c: {mode: truncate}\n  a.d: {object: x.y}\n'), [
    ['streams["a.b"]', '"object" is required (set it on the stream or in defaults)', 4, 3],
    ['streams["a.c"]', '"object" is required (set it on the stream or in defaults)', 5, 3],
  ]);
});

test('object template variables must be known; ${NAME} is not a template variable', () => {
  assert.deepEqual(problems(oneStream(["object: '{target_schema}.{stream_tabel}_{YYYY}{nope}'"])), [
    ['streams["public.users"].object', 'unknown variable {stream_tabel} in object', 5, 13],
    ['streams["public.users"].object', 'unknown variable {nope} in object', 5, 13],
  ]);
  const all = '{stream_schema}{stream_table}{stream_schema_lower}{stream_schema_upper}{stream_table_lower}{stream_table_upper}'
    + '{stream_name}{stream_file_path}{stream_file_name}{stream_file_folder}{stream_file_ext}{source_name}{target_name}'
    + '{target_schema}{run_timestamp}{YYYY}{MM}{DD}{HH}${SCHEMA}';
  assert.deepEqual(problems(oneStream([`object: '${all}'`])), []);
});

test('select cannot mix included and excluded columns', () => {
  assert.deepEqual(problems(oneStream(['object: a.b', 'select: [id, -secret]'])), [
    ['streams["public.users"].select', 'select cannot mix included and excluded columns', 6, 13],
  ]);
  assert.deepEqual(problems(oneStream(['object: a.b', 'select: [-a, -b]'])), []);
});

test('sql cannot be combined with where, nor be on a wildcard or file stream', () => {
  assert.deepEqual(problems(oneStream(['object: a.b', 'sql: select 1', 'where: x > 1'], undefined, 'custom')), [
    ['streams.custom.where', '"where" cannot be combined with "sql"', 7, 5],
  ]);
  assert.deepEqual(problems(oneStream(['object: a.b', 'sql: select 1'], undefined, 'public.*')), [
    ['streams["public.*"].sql', 'a wildcard or file stream cannot have "sql"', 6, 10],
  ]);
  assert.deepEqual(problems(oneStream(['object: a.b', 'sql: select 1'], undefined, 'exports/')), [
    ['streams.exports/.sql', 'a wildcard or file stream cannot have "sql"', 6, 10],
  ]);
  const fileSource = oneStream(['object: a.b', 'sql: select 1'], 'source: EXPORTS\ntarget: LAKE\n', 'data.csv');
  assert.deepEqual(problems(fileSource, ctx(CONNECTIONS)), [['streams["data.csv"].sql', 'a wildcard or file stream cannot have "sql"', 6, 10]]);
  assert.deepEqual(problems(fileSource), [], 'source kind unknown at save time');
});

test('option enums list their values', () => {
  const text = oneStream([
    'object: a.b',
    'source_options: {format: xml, compression: zip}',
    'target_options: {column_casing: camel, merge_strategy: upsert}',
  ]);
  assert.deepEqual(problems(text), [
    ['streams["public.users"].source_options.format', 'format must be one of csv, json, jsonlines, parquet', 6, 30],
    ['streams["public.users"].source_options.compression', 'compression must be one of auto, none, gzip', 6, 48],
    ['streams["public.users"].target_options.column_casing', 'column_casing must be one of source, lower, upper, snake', 7, 37],
    ['streams["public.users"].target_options.merge_strategy', 'merge_strategy must be one of update_insert, delete_insert, insert, update', 7, 60],
  ]);
});

test('target options follow the target kind when the target is defined', () => {
  const text = (target: string): string => oneStream(['object: a.b', 'target_options: {file_max_rows: 10, add_new_columns: true}'], `source: WAREHOUSE\ntarget: ${target}\n`);
  assert.deepEqual(problems(text('LAKE'), ctx(CONNECTIONS)), [
    ['streams["public.users"].target_options.file_max_rows', 'unknown target option "file_max_rows"', 6, 22],
  ]);
  assert.deepEqual(problems(text('EXPORTS'), ctx(CONNECTIONS)), [
    ['streams["public.users"].target_options.add_new_columns', 'unknown target option "add_new_columns"', 6, 41],
  ]);
  assert.deepEqual(problems(text('NOT_YET')), [], 'undefined target: both groups accepted');
});

test('file targets support full-refresh and truncate only', () => {
  const text = oneStream(['object: out/users.csv', 'mode: snapshot'], 'source: WAREHOUSE\ntarget: EXPORTS\n');
  assert.deepEqual(problems(text, ctx(CONNECTIONS)), [['streams["public.users"].mode', 'mode snapshot is not supported for file targets', 6, 11]]);
  assert.deepEqual(problems(text), []);
});

test('pre_sql and post_sql file:// references must exist', () => {
  const text = oneStream(['object: a.b', 'target_options: {pre_sql: "file://sql/pre.sql", post_sql: "file://sql/post.sql"}']);
  assert.deepEqual(problems(text, ctx({}, ['sql/pre.sql'])), [
    ['streams["public.users"].target_options.post_sql', 'file "sql/post.sql" does not exist', 6, 63],
  ]);
});

test('streamMatches: exact keys and wildcard keys', () => {
  const f = parsed(SPEC_EXAMPLE.replace('sql: file://queries/daily_revenue.sql', 'sql: select 1')
    + '', ctx(CONNECTIONS));
  assert.equal(streamMatches(f, 'public.users'), true);
  assert.equal(streamMatches(f, 'public.orders'), true, 'matched by public.*');
  assert.equal(streamMatches(f, 'public.*'), true, 'the wildcard key itself');
  assert.equal(streamMatches(f, 'sales.orders'), true);
  assert.equal(streamMatches(f, 'sales.items'), false);
  assert.equal(streamMatches(f, 'daily_revenue'), true);
  assert.equal(streamMatches(f, 'PUBLIC.users'), false, 'keys are case-sensitive');
  const files = parsed('source: A\ntarget: B\ndefaults: {object: x}\nstreams:\n  data/*.csv:\n  logs/2025-0?.json:\n');
  assert.equal(streamMatches(files, 'data/a.csv'), true);
  assert.equal(streamMatches(files, 'data/sub/a.csv'), false, '* stops at /');
  assert.equal(streamMatches(files, 'logs/2025-01.json'), true);
  assert.equal(streamMatches(files, 'logs/2025-10.json'), false);
  const prefixed = parsed('source: A\ntarget: B\ndefaults: {object: x}\nstreams:\n  public.stg_*:\n');
  assert.equal(streamMatches(prefixed, 'public.stg_orders'), true);
  assert.equal(streamMatches(prefixed, 'public.orders'), false);
  assert.equal(streamMatches(prefixed, 'publicXstg_orders'), false, 'the dot is literal');
});

test('every target option of the contract is accepted: flatten, adjust_column_type, batch_limit (a positive integer)', () => {
  const text = oneStream(['object: a.b', 'source_options: {flatten: true}', 'target_options: {adjust_column_type: true, batch_limit: 100}']);
  assert.deepEqual(problems(text), []);
  assert.deepEqual(problems(oneStream(['object: a.b', 'source_options: {flatten: false}', 'target_options: {adjust_column_type: false}'])), []);
  // flatten, adjust_column_type and batch_limit are honoured (replication-flatten.test.ts, replication-adjust-types.test.ts, replication-batch-limit.test.ts).
  assert.equal(problems(oneStream(['object: a.b', 'target_options: {adjust_column_type: sometimes}'])).length, 1);
  for (const bad of ['0', '-5', '2.5', 'many']) {
    const found = problems(oneStream(['object: a.b', `target_options: {batch_limit: ${bad}}`]));
    assert.equal(found.length, 1, `batch_limit: ${bad}`);
    assert.equal(found[0]![0], 'streams["public.users"].target_options.batch_limit');
  }
});
