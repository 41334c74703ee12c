// Model front-matter and Jinja config() through compile (front-matter,
// config() and the defaults merge): the three styles, what is only a comment, the parse errors,
// dbt hook keys, unknown-key warnings, config() block forms and their keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build, compiledNode, duckProject, fatal, json, logLines } from './helpers/build-cli.js';

type Node = Record<string, unknown>;

/** Compiles a one-model project (plus `extra` files) and returns the model's node and the stderr log lines. */
async function one(body: string, extra: Record<string, string> = {}, config?: string): Promise<{ node: Node; logs: string[] }> {
  const dir = duckProject({ 'm.sql': body, ...extra }, config);
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  return { node: compiledNode(r, 'm'), logs: logLines(r.err) };
}

async function failure(body: string, config?: string): Promise<{ dir: string; message: string }> {
  const dir = duckProject({ 'm.sql': body }, config);
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 1, r.out);
  assert.equal(r.out, '');
  return { dir, message: fatal(r) };
}

test('/** yaml **/ front-matter, block style, leading whitespace allowed', async () => {
  const { node } = await one('\n  /**\nmode: view\ntags:\n  - a\n  - b\n**/\nselect 1 as x');
  assert.equal(node.mode, 'view');
  assert.deepEqual(node.tags, ['a', 'b']);
  assert.equal(node.sql, 'select 1 as x');
  const inline = await one('/** {mode: truncate} **/\nselect 2');
  assert.equal(inline.node.mode, 'truncate');
  assert.equal(inline.node.sql, 'select 2');
});

test('/* { … } */ is front-matter only when it is a mapping; /* not yaml */ is an ordinary comment', async () => {
  const fm = await one('/* {mode: view, tags: [x]} */\nselect 1');
  assert.equal(fm.node.mode, 'view');
  assert.deepEqual(fm.node.tags, ['x']);
  assert.equal(fm.node.sql, 'select 1');
  // An ordinary comment: the body keeps it, and config() (no front-matter) applies.
  const comment = await one("/* not yaml */\n{{ config(materialized='view') }}select 1");
  assert.equal(comment.node.mode, 'view');
  assert.equal(comment.node.sql, '/* not yaml */\nselect 1');
  const broken = await one('/* {mode: [oops */\nselect 1');
  assert.equal(broken.node.mode, 'full-refresh');
  assert.equal(broken.node.sql, '/* {mode: [oops */\nselect 1');
});

test('-- { … } lines are joined; multi-line form works; other -- lines are comments', async () => {
  const single = await one('-- {mode: view}\nselect 1');
  assert.equal(single.node.mode, 'view');
  assert.equal(single.node.sql, 'select 1');
  const multi = await one('-- {\n--   mode: incremental,\n--   unique_key: [id, day],\n--   update_key: ts\n-- }\nselect 1 as id');
  assert.equal(multi.node.mode, 'incremental');
  assert.deepEqual(multi.node.unique_key, ['id', 'day']);
  assert.equal(multi.node.update_key, 'ts');
  assert.equal(multi.node.sql, 'select 1 as id');
  const plain = await one("-- just a note\n-- {{ config(materialized='view') }}\n{{ config(mode='truncate') }}select 1");
  assert.equal(plain.node.mode, 'truncate');
  assert.equal(plain.node.sql, '-- just a note\n-- \nselect 1');
  const notMapping = await one('-- {\n-- oops\nselect 1');
  assert.equal(notMapping.node.mode, 'full-refresh');
});

test('a Jinja expression in a leading comment is not front-matter (config() in it still runs, as in dbt)', async () => {
  for (const body of ["-- {{ config(materialized='view') }}\nselect 1", "/* {{ config(materialized='view') }} */\nselect 1"]) {
    const { node, logs } = await one(body);
    assert.equal(node.mode, 'view', body);
    assert.deepEqual(logs, [], body);
  }
});

test('an empty /** **/ is front-matter: config() in the body renders to nothing and changes nothing', async () => {
  for (const head of ['/** **/', '/**\n**/', '/**\n\n**/']) {
    const { node } = await one(`${head}\n{{ config(materialized='view', tags=['t']) }}select 1`, {}, 'target: DUCK\ndefaults: {tags: [d]}\n');
    assert.equal(node.mode, 'full-refresh', head);
    assert.deepEqual(node.tags, ['d']);
    assert.equal(node.sql, 'select 1');
  }
  const withFm = await one("-- {tags: [fm]}\n{% config(materialized='view') %}select 1");
  assert.equal(withFm.node.mode, 'full-refresh');
  assert.deepEqual(withFm.node.tags, ['fm']);
});

test('invalid YAML and non-mapping front-matter', async () => {
  const bad = await failure('/**\nmode: [unclosed\n**/\nselect 1');
  assert.match(bad.message, new RegExp(`^could not load build project from ${bad.dir}: model 'm': could not parse YAML frontmatter: \\S`));
  assert.doesNotMatch(bad.message, /\n|:$/);
  for (const body of ['/**\n- a\n- b\n**/\nselect 1', '/** 42 **/\nselect 1']) {
    const r = await failure(body);
    assert.match(r.message, new RegExp(`^could not load build project from ${r.dir}: model 'm': could not parse YAML frontmatter: \\S`), body);
  }
});

test('pre_hook/post_hook in front-matter and in config()', async () => {
  for (const key of ['pre_hook', 'post_hook']) {
    const fm = await failure(`/**\n${key}: "grant select"\n**/\nselect 1`);
    assert.equal(fm.message, `could not load build project from ${fm.dir}: pre_hook/post_hook are not supported in service build frontmatter. Use hooks.start/hooks.end instead.`);
    const cfg = await failure(`{{ config(${key}='grant select') }}select 1`);
    assert.match(cfg.message, /^could not compile build project: /);
    assert.ok(cfg.message.endsWith('pre_hook/post_hook are not supported in service build config(). Use YAML frontmatter with hooks.start/hooks.end instead.'), cfg.message);
  }
});

test('unknown front-matter keys warn and are ignored; unrecognized config() keys warn', async () => {
  const fm = await one('/**\nmode: view\ncolour: blue\n**/\nselect 1');
  assert.equal(fm.node.mode, 'view');
  assert.deepEqual(fm.logs, ["WRN model 'm': unknown front-matter key 'colour' (ignored)"]);
  const cfg = await one("{{ config(materialized='view', persist_docs=true) }}select 1");
  assert.equal(cfg.node.mode, 'view');
  assert.deepEqual(cfg.logs, ["WRN model 'm': unrecognized config key 'persist_docs' (ignored)"]);
});

test('the three config() forms set mode, materialized, tags, keys and strategy', async () => {
  const block = await one("{% config(materialized='view', tags=['a', 'b']) %}\nselect 1");
  assert.equal(block.node.mode, 'view');
  assert.deepEqual(block.node.tags, ['a', 'b']);
  assert.equal(block.node.sql, 'select 1');
  const trimmed = await one("select 1 as x\n{%- config(mode='truncate') -%}\n");
  assert.equal(trimmed.node.mode, 'truncate');
  assert.equal(trimmed.node.sql, 'select 1 as x');
  const expr = await one("{{ config(materialized='incremental', unique_key=['id', 'day'], update_key='ts', merge_strategy='Update+Insert') }}select 1 as id");
  assert.equal(expr.node.mode, 'incremental');
  assert.deepEqual(expr.node.unique_key, ['id', 'day']);
  assert.equal(expr.node.update_key, 'ts');
  assert.equal(expr.node.merge_strategy, 'update+insert');
  // An explicit mode wins over materialized.
  const both = await one("{{ config(mode='append', materialized='view') }}select 1");
  assert.equal(both.node.mode, 'append');
  // config() runs at compile time: the load-time update_key check does not see it.
  const noKey = await one("{{ config(materialized='incremental') }}select 1");
  assert.equal(noKey.node.mode, 'incremental');
});

test('tags= replaces defaults.tags; front-matter tags union with them', async () => {
  const config = 'target: DUCK\ndefaults: {tags: [base, shared]}\n';
  const cfg = await one("{{ config(tags=['own']) }}select 1", {}, config);
  assert.deepEqual(cfg.node.tags, ['own']);
  const fm = await one('-- {tags: [shared, own]}\nselect 1', {}, config);
  assert.deepEqual(fm.node.tags, ['base', 'shared', 'own']);
  const none = await one('select 1', {}, config);
  assert.deepEqual(none.node.tags, ['base', 'shared']);
});

test('config(schema=/database=) warns and does not rename the table', async () => {
  const { node, logs } = await one("{{ config(schema='elsewhere') }}select 1");
  assert.equal(node.table, 'public.m');
  assert.deepEqual(logs, ["WRN model 'm': config(schema=...) does not change the table name; use front-matter schema: instead"]);
});

test('config(enabled=false) removes the model from the DAG; ref() to it still resolves without an edge', async () => {
  const dir = duckProject({
    'off.sql': '{{ config(enabled=false) }}select 1 as id',
    'fm_off.sql': '-- {enabled: false}\nselect 1 as id',
    'user.sql': "select * from {{ ref('off') }} join {{ ref('fm_off') }} using (id)",
  });
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual((json(r) as { order: string[] }).order, ['user']);
  assert.equal(compiledNode(r, 'user').sql, 'select * from public.off join public.fm_off using (id)');
  assert.deepEqual(compiledNode(r, 'user').dependencies, []);
  // A disabled model named exactly by a selector is an error.
  const sel = await build('list', dir, '-s', 'off');
  assert.equal(sel.code, 1);
  assert.match(fatal(sel), /^could not compile build project: could not apply selectors: /);
});

test('mode and merge_strategy set by config() are validated when it runs', async () => {
  const cases: [string, string][] = [
    ["{{ config(materialized='ephemeral') }}select 1", "model 'm': ephemeral models are not supported; use view or table"],
    ["{{ config(mode='bogus') }}select 1", "model 'm': unknown mode 'bogus'; expected one of: append, full-refresh, incremental, truncate, view"],
    ["{{ config(materialized='bogus') }}select 1", "model 'm': unknown materialized value 'bogus'; expected table, view, or incremental"],
    ["{{ config(merge_strategy='upsert') }}select 1", "model 'm': unknown merge_strategy 'upsert'; expected one of: delete+insert, update+insert, insert"],
  ];
  for (const [body, message] of cases) {
    const r = await failure(body);
    assert.match(r.message, /^could not compile build project: could not compile models: /, body);
    assert.ok(r.message.endsWith(message), r.message);
  }
});

test('front-matter keys replace defaults (explicit false included); tags union; hooks defaults first', async () => {
  const config = 'target: DUCK\ndefaults: {drop_cascade: true, unique_key: [a, b], tags: [d], hooks: {start: [{type: log, message: d}], end: [{type: log, message: d_end}]}}\n';
  const dir = duckProject({
    'm.sql': '/**\ndrop_cascade: false\nunique_key: k\ntags: [own, d]\nhooks:\n  start: [{type: log, message: m}]\n**/\nselect 1',
    'plain.sql': 'select 1',
  }, config);
  const r = await build('compile', dir, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(compiledNode(r, 'm').unique_key, ['k']);
  assert.deepEqual(compiledNode(r, 'm').tags, ['d', 'own']);
  assert.deepEqual(compiledNode(r, 'plain').unique_key, ['a', 'b']);
  const names = async (sel: string) => (json(await build('list', dir, '--json', '-s', sel)) as { name: string }[]).map((e) => e.name);
  assert.deepEqual(await names('config.drop_cascade:false'), ['m']);
  assert.deepEqual(await names('config.drop_cascade:true'), ['plain']);
  const text = await build('compile', dir, '-s', 'm');
  assert.match(text.out, /\n {2}start_hooks:\n {4}- \{"type":"log","message":"d"\}\n {4}- \{"type":"log","message":"m"\}\n {2}end_hooks:\n {4}- \{"type":"log","message":"d_end"\}\n/);
});
