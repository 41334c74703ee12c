// list/compile output formats and the CLI's help and usage rules (spec
// the CLI, output streams, list output, compile output, A1, A2, A6, A18, A19): exact JSON
// strings and key order, the text forms, empty selections, usage errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { build, cli, duckProject, project, warehouseCreated, withEnv, writeFiles } from './helpers/build-cli.js';
import { commandHelp, buildHelp } from '../cli/build-command/help.js';

const SHOP_FILES = {
  'raw_orders.csv': 'id,customer_id,amount,status,updated_at\n1,10,100,placed,2024-01-05\n2,11,250,shipped,2024-01-20\n3,10,75,placed,2024-02-03\n',
  'staging/stg_orders.sql': "/**\nmode: view\ntags: [staging]\n**/\nselect id, customer_id, amount, status, updated_at from {{ ref('raw_orders') }}\n",
  'marts/fct_orders.sql': '-- {mode: full-refresh, tests: [{not_null: [customer_id]}, {unique: customer_id}]}\nselect customer_id, sum(amount) as total from staging.stg_orders group by 1\n',
};
const shop = () => duckProject(SHOP_FILES);

test('A1 list --json: the exact payload, nothing on stderr, no database file', async () => {
  const dir = shop();
  const r = await build('list', dir, '--json');
  assert.equal(r.code, 0);
  assert.equal(r.out, '[{"name":"raw_orders","type":"seed","table":"public.raw_orders","file":"raw_orders.csv"},{"name":"stg_orders","type":"view","table":"staging.stg_orders","file":"staging/stg_orders.sql"},{"name":"fct_orders","type":"full-refresh","table":"marts.fct_orders","file":"marts/fct_orders.sql"}]\n');
  assert.equal(r.err, '');
  assert.equal(warehouseCreated(dir), false);
});

test('list text with a target: name, full name and kind in padded columns', async () => {
  const r = await build('list', shop());
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, [
    'raw_orders   public.raw_orders    (seed)',
    'stg_orders   staging.stg_orders   (view)',
    'fct_orders   marts.fct_orders     (full-refresh)',
    '',
  ].join('\n'));
});

test('A2 without a target: list shows files and no table; compile fails with the no-target error', async () => {
  const dir = project({ 'service_build.yml': '', ...SHOP_FILES, 'staging/a.sql': 'select 1' });
  const r = await build('list', dir);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, [
    'a            staging/a.sql   (full-refresh)',
    'raw_orders   raw_orders.csv   (seed)',
    'stg_orders   staging/stg_orders.sql   (view)',
    'fct_orders   marts/fct_orders.sql   (full-refresh)',
    '',
  ].join('\n'));
  const j = await build('list', dir, '--json', '-s', 'raw_orders');
  assert.equal(j.out, '[{"name":"raw_orders","type":"seed","file":"raw_orders.csv"}]\n');
  for (const extra of [[], ['--json']]) {
    const c = await build('compile', dir, ...extra);
    assert.equal(c.code, 1);
    assert.equal(c.out, '');
    assert.equal(c.err, "fatal: No target specified. Use '--target <conn>' or set target in service_build.yml.\n");
  }
});

test('A6 compile --json: the exact payload, node fields in the documented order', async () => {
  const dir = shop();
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const seed = '{"name":"raw_orders","type":"seed","table":"public.raw_orders","file":"raw_orders.csv","format":"csv","mode":"full-refresh","dependencies":[],"tags":[],"tests":[],"sql":""}';
  const stg = '{"name":"stg_orders","type":"model","table":"staging.stg_orders","file":"staging/stg_orders.sql","mode":"view","tags":["staging"],"dependencies":["raw_orders"],"tests":[],"sql":"select id, customer_id, amount, status, updated_at from public.raw_orders"}';
  const fct = '{"name":"fct_orders","type":"model","table":"marts.fct_orders","file":"marts/fct_orders.sql","mode":"full-refresh","tags":[],"dependencies":["stg_orders"],"tests":[{"not_null":["customer_id"]},{"unique":"customer_id"}],"sql":"select customer_id, sum(amount) as total from staging.stg_orders group by 1"}';
  assert.equal(r.out, `{"order":["raw_orders","stg_orders","fct_orders"],"nodes":[${seed},${stg},${fct}],"target":"DUCK","compiled":true}\n`);
  assert.equal(warehouseCreated(dir), false);
});

test('compile --json model keys: unique_key, update_key, merge_strategy (incremental only) in order', async () => {
  const dir = duckProject({
    'inc.sql': "/**\nmode: incremental\nunique_key: id\nupdate_key: ts\ntags: [b, a]\n**/\nselect 1 as id, now() as ts where {{ incremental_where_cond() }}",
    'keyed.sql': '-- {unique_key: [k1, k2], update_key: ts}\nselect 1 as k1',
    'b_dep.sql': 'select 1', 'a_dep.sql': 'select 1',
    'deps.sql': 'select * from b_dep, a_dep',
  });
  const r = await build('compile', dir, '--json');
  const nodes = (JSON.parse(r.out) as { nodes: Record<string, unknown>[] }).nodes;
  const byName = (n: string) => JSON.stringify(nodes.find((x) => x.name === n));
  assert.equal(byName('inc'), '{"name":"inc","type":"model","table":"public.inc","file":"inc.sql","mode":"incremental","unique_key":["id"],"update_key":"ts","merge_strategy":"delete+insert","tags":["b","a"],"dependencies":[],"tests":[],"sql":"select 1 as id, now() as ts where 1=1"}');
  assert.equal(byName('keyed'), '{"name":"keyed","type":"model","table":"public.keyed","file":"keyed.sql","mode":"full-refresh","unique_key":["k1","k2"],"update_key":"ts","tags":[],"dependencies":[],"tests":[],"sql":"select 1 as k1"}');
  // dependencies are names, sorted.
  assert.equal(byName('deps'), '{"name":"deps","type":"model","table":"public.deps","file":"deps.sql","mode":"full-refresh","tags":[],"dependencies":["a_dep","b_dep"],"tests":[],"sql":"select * from public.b_dep, public.a_dep"}');
});

test('compile text: execution order, then one block per node', async () => {
  const dir = duckProject({
    ...SHOP_FILES,
    'marts/inc.sql': "/**\nmode: incremental\nunique_key: [id, day]\nupdate_key: ts\nhooks: {start: [{type: log, message: go}]}\n**/\nselect 1 as id from {{ ref('fct_orders') }} where {{ incremental_where_cond() }}",
  });
  const r = await build('compile', dir);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, [
    'DAG Execution Order:',
    '  raw_orders (seed)',
    '  stg_orders (view)',
    '  fct_orders (full-refresh)',
    '  inc (incremental)',
    '',
    'raw_orders:',
    '  type: seed',
    '  table: public.raw_orders',
    '  file: raw_orders.csv',
    '  format: csv',
    '',
    'stg_orders:',
    '  type: model',
    '  table: staging.stg_orders',
    '  file: staging/stg_orders.sql',
    '  mode: view',
    '  tags: [staging]',
    '  dependencies: [raw_orders]',
    '  sql: |',
    '    select id, customer_id, amount, status, updated_at from public.raw_orders',
    '',
    'fct_orders:',
    '  type: model',
    '  table: marts.fct_orders',
    '  file: marts/fct_orders.sql',
    '  mode: full-refresh',
    '  tags: []',
    '  dependencies: [stg_orders]',
    '  sql: |',
    '    select customer_id, sum(amount) as total from staging.stg_orders group by 1',
    '',
    'inc:',
    '  type: model',
    '  table: marts.inc',
    '  file: marts/inc.sql',
    '  mode: incremental',
    '  unique_key: [id, day]',
    '  merge_strategy: delete+insert',
    '  update_key: ts',
    '  tags: []',
    '  dependencies: [fct_orders]',
    '  start_hooks:',
    '    - {"type":"log","message":"go"}',
    '  sql: |',
    '    select 1 as id from marts.fct_orders where 1=1',
    '',
  ].join('\n'));
});

test('A19 empty selections: [] / empty compile payload / text lines, exit 0', async () => {
  const dir = shop();
  const cases: [string[], string][] = [
    [['list', '--json'], '[]\n'],
    [['compile', '--json'], '{"order":[],"nodes":[],"target":"DUCK","compiled":true}\n'],
    [['list'], 'No models selected.\n'],
    [['compile'], '# No models selected.\n'],
  ];
  for (const [args, out] of cases) {
    const r = await build(args[0]!, dir, '-s', 'tag:nothing', ...args.slice(1));
    assert.equal(r.code, 0, args.join(' '));
    assert.equal(r.out, out, args.join(' '));
    assert.equal(r.err, '');
  }
  const empty = duckProject({});
  const none = await build('list', empty, '--json');
  assert.equal(none.out, '[]\n');
  // A project with nothing in it says so on stderr (an empty selection of a real project does not).
  assert.match(none.err, new RegExp(`WRN no models or seeds found under ${empty}\n$`));
});

const usage = (message: string, command?: string) => `error: ${message}\nRun 'service build${command ? ` ${command}` : ''} --help' for usage.\n`;

test('A18 usage errors: exact message, usage line, exit 2, nothing on stdout, nothing read', async () => {
  const dir = shop();
  const cases: [string[], string][] = [
    [['deploy'], usage('unknown build command "deploy", expected run, list, test, or compile (or graph)')],
    [['list', dir, '--bogus'], usage('unknown flag: --bogus', 'list')],
    [['compile', dir, '-q'], usage('unknown flag: -q', 'compile')],
    [['list', dir, '--full-refresh'], usage("flag --full-refresh is not valid for 'service build list' (applies to: run)", 'list')],
    [['compile', dir, '--threads', '2'], usage("flag --threads is not valid for 'service build compile' (applies to: run, test)", 'compile')],
    [['list', dir, '-x'], usage("flag -x is not valid for 'service build list' (applies to: run, test)", 'list')],
    [['list', dir, '--range', '2024-01-01,2024-02-01'], usage("flag --range is not valid for 'service build list' (applies to: run)", 'list')],
    [['list', dir, '--target'], usage('flag needs an argument: --target', 'list')],
    [['compile', dir, '-s'], usage('flag needs an argument: -s', 'compile')],
    [['run', dir, '--threads', 'abc'], usage('invalid argument "abc" for "--threads": expected an integer', 'run')],
    [['list', dir, 'other'], usage('accepts at most 1 arg(s), received 2', 'list')],
    [['list', dir, '--prod', '--schema', 'x'], usage('cannot combine --prod and --schema', 'list')],
    [['run', dir, '--vars', '[1]'], usage('could not parse --vars: expected a JSON object', 'run')],
    [['compile', dir, '--vars', '42', '--json'], usage('could not parse --vars: expected a JSON object', 'compile')],
    [['run', dir, '--range', '2024-01-01'], usage('invalid --range "2024-01-01": expected \'start,end\' or \'start,end,step\'', 'run')],
    [['run', dir, '--range', '2024-03-01,2024-01-01'], usage('invalid --range "2024-03-01,2024-01-01": start must be before end', 'run')],
    [['run', dir, '--range', ' ,2024-01-01'], usage('invalid --range " ,2024-01-01": start and end must be non-empty', 'run')],
    [['run', dir, '--range', '2024-01-01,2024-02-01,1x'], usage("invalid --range step: invalid duration '1x': expected <int><unit> with unit in ms,s,m,h,d,w,mo,y", 'run')],
    [['run', dir, '--range', 'yesterday,2024-02-01,1d'], usage('--range with step requires ISO date/timestamp start', 'run')],
    [['run', dir, '--range', '2024-01-01,later,1d'], usage('--range with step requires ISO date/timestamp end', 'run')],
  ];
  for (const [argv, err] of cases) {
    const r = await build(...argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.equal(r.out, '', argv.join(' '));
    assert.equal(r.err, err);
  }
  assert.equal(warehouseCreated(dir), false);
});

test('A18 help forms print to stdout and exit 0', async () => {
  const dir = shop();
  for (const argv of [[], ['help'], ['--help'], ['-h']]) {
    const r = await build(...argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.equal(r.out, buildHelp());
    assert.equal(r.err, '');
  }
  assert.match(buildHelp(), /run .*\n.*list .*\n.*test .*\n.*compile /);
  for (const command of ['run', 'list', 'test', 'compile'] as const) {
    for (const argv of [[command, '--help'], [command, dir, '-h', '--json']]) {
      const r = await build(...argv);
      assert.equal(r.code, 0, argv.join(' '));
      assert.equal(r.out, commandHelp(command));
    }
  }
  // Each command's help lists exactly the flags it accepts.
  assert.match(commandHelp('run'), /--full-refresh/);
  assert.doesNotMatch(commandHelp('list'), /--full-refresh|--threads|--range|--no-seeds|--fail-fast/);
  assert.match(commandHelp('test'), /--threads/);
  assert.match(commandHelp('test'), /--fail-fast/);
  assert.doesNotMatch(commandHelp('test'), /--full-refresh/);
  assert.equal(warehouseCreated(dir), false);
  assert.equal((await cli('--version')).code, 0);
});

test('A18 run with no config, no --target, no -R prints the run help and creates nothing', async () => {
  const empty = project({});
  const r = await build('run', empty);
  assert.equal(r.code, 0);
  assert.equal(r.out, commandHelp('run'));
  // Before the help, stderr says why nothing ran.
  const why = `nothing to run: ${empty} has no service_build.yml and no --target was given\n`;
  assert.equal(r.err, why);
  assert.deepEqual(readdirSync(empty), []);
  const j = await build('run', empty, '--json');
  assert.equal(j.code, 0);
  assert.equal(j.out, '');
  assert.equal(j.err, why + commandHelp('run'));
  // A path that does not exist is an error naming the absolute path, not help.
  const missing = await build('run', `${empty}/nope`);
  assert.deepEqual([missing.code, missing.out, missing.err], [1, '', `fatal: could not access project directory: ${empty}/nope\n`]);
  // A24: a config-less root with sub-projects, without -R, is the same case.
  const repo = project({});
  writeFiles(repo, { 'sales/service_build.yml': 'target: DUCK\n', 'sales/orders.sql': 'select 1 as id' });
  const h = await build('run', repo);
  assert.equal(h.code, 0);
  assert.equal(h.out, commandHelp('run'));
  assert.deepEqual(readdirSync(repo), ['sales']);
});

test('SERVICE_LOGGING=JSON writes log lines as {"level","msg","time"} on stderr; stdout keeps the payload', async () => {
  const dir = duckProject({ 'a.sql': 'select 1' });
  const r = await withEnv({ SERVICE_LOGGING: 'json' }, () => build('compile', dir, '--json', '--target', 'NOPE'));
  assert.equal(r.code, 0, r.err);
  assert.equal((JSON.parse(r.out) as { target: string }).target, 'NOPE');
  const lines = r.err.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines.map((l) => [Object.keys(l), l.level, l.msg]), [
    [['level', 'msg', 'time'], 'warn', "target connection 'NOPE' not found locally; statement splitting will use the generic dialect"],
  ]);
  const text = await build('compile', dir, '--json', '--target', 'NOPE');
  assert.match(text.err, /^\d{1,2}:\d{2}[AP]M WRN target connection 'NOPE' not found locally/);
  const debug = await build('compile', dir, '--json', '--target', 'NOPE', '-d');
  assert.match(debug.err, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} WRN target connection/);
});
