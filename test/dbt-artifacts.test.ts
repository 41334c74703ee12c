/**
 * dbt's run artifacts: `build run` writes target/manifest.json (schema v12),
 * target/run_results.json (v6) and the compiled / run SQL of each node, for
 * a dbt project and for a project of our own format — whose next run does
 * not read the artifacts folder as models.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { build, duckProject, project, withEnv } from './helpers/build-cli.js';

const PROFILE = 'p:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: wh.duckdb\n      schema: main\n';

interface RunResults {
  metadata: { dbt_schema_version: string; invocation_id: string; generated_at: string };
  results: { unique_id: string; status: string; timing: { name: string; started_at: string; completed_at: string }[]; thread_id: string; execution_time: number; failures: number | null; message: string | null; compiled_code: string | null; adapter_response: Record<string, unknown> }[];
  elapsed_time: number;
  args: Record<string, unknown>;
}

interface Manifest {
  metadata: { dbt_schema_version: string; project_name: string; adapter_type: string };
  nodes: Record<string, { unique_id: string; resource_type: string; depends_on: { nodes: string[] }; compiled_code: string | null; relation_name: string | null; config: { materialized: string } }>;
  parent_map: Record<string, string[]>;
  child_map: Record<string, string[]>;
}

const read = <T>(dir: string, file: string): T => JSON.parse(readFileSync(join(dir, 'target', file), 'utf8')) as T;

describe('run artifacts', () => {
  test('a dbt project: run_results lists every node with status and timing; the manifest has every node with depends_on', async () => {
    const dir = project({
      'dbt_project.yml': 'name: shop\nprofile: p\n',
      'profiles.yml': PROFILE,
      'seeds/raw.csv': 'id,kind\n1,a\n2,b\n2,c\n',
      'models/stg.sql': "select * from {{ ref('raw') }}\n",
      'models/marts/wide.sql': "{{ config(materialized='table') }}\nselect id, count(*) as n from {{ ref('stg') }} group by id\n",
      'models/after_bad.sql': "select * from {{ ref('bad_parent') }}\n",
      'models/bad_parent.sql': 'select * from nowhere_at_all\n',
      'models/schema.yml': 'version: 2\nmodels:\n  - name: stg\n    columns:\n      - name: id\n        tests:\n          - not_null\n          - unique:\n              config:\n                severity: warn\n  - name: wide\n    columns:\n      - name: id\n        tests: [unique]\n',
    });
    const r = await withEnv({ DBT_PROFILES_DIR: dir }, () => build('run', dir));
    assert.equal(r.code, 1, r.err); // bad_parent fails, after_bad is skipped
    const rr = read<RunResults>(dir, 'run_results.json');
    assert.equal(rr.metadata.dbt_schema_version, 'https://schemas.getdbt.com/dbt/run-results/v6.json');
    assert.equal(rr.args.which, 'run');
    assert.ok(rr.elapsed_time > 0);
    const status = Object.fromEntries(rr.results.map((x) => [x.unique_id, x.status]));
    assert.deepEqual(status, {
      'seed.shop.raw': 'success',
      'model.shop.stg': 'success',
      'model.shop.wide': 'success',
      'model.shop.bad_parent': 'error',
      'model.shop.after_bad': 'skipped',
      'test.shop.not_null_stg_id': 'pass',
      'test.shop.unique_stg_id': 'warn',
      'test.shop.unique_wide_id': 'pass',
    });
    for (const x of rr.results) {
      if (x.status === 'skipped') {
        assert.deepEqual(x.timing, []);
        continue;
      }
      assert.deepEqual(x.timing.map((t) => t.name), ['compile', 'execute'], x.unique_id);
      assert.ok(Date.parse(x.timing[1]!.completed_at) >= Date.parse(x.timing[1]!.started_at));
      assert.ok(x.execution_time >= 0 && /^Thread-\d+$/.test(x.thread_id), JSON.stringify(x));
    }
    const warn = rr.results.find((x) => x.unique_id === 'test.shop.unique_stg_id')!;
    assert.equal(warn.failures, 1);
    assert.match(rr.results.find((x) => x.unique_id === 'model.shop.bad_parent')!.message!, /nowhere_at_all/);

    const m = read<Manifest>(dir, 'manifest.json');
    assert.equal(m.metadata.dbt_schema_version, 'https://schemas.getdbt.com/dbt/manifest/v12.json');
    assert.equal(m.metadata.project_name, 'shop');
    assert.deepEqual(Object.keys(m.nodes).sort(), Object.keys(status).sort());
    assert.deepEqual(m.nodes['model.shop.wide']!.depends_on.nodes, ['model.shop.stg']);
    assert.deepEqual(m.nodes['model.shop.stg']!.depends_on.nodes, ['seed.shop.raw']);
    assert.deepEqual(m.nodes['test.shop.unique_wide_id']!.depends_on.nodes, ['model.shop.wide']);
    assert.equal(m.nodes['model.shop.wide']!.relation_name, '"main"."wide"');
    assert.equal(m.nodes['model.shop.wide']!.config.materialized, 'table');
    assert.deepEqual(m.child_map['model.shop.stg']!.sort(), ['model.shop.wide', 'test.shop.not_null_stg_id', 'test.shop.unique_stg_id']);
    assert.match(m.nodes['model.shop.stg']!.compiled_code!, /from main\.raw/);

    assert.match(readFileSync(join(dir, 'target/compiled/shop/models/marts/wide.sql'), 'utf8'), /from main\.stg group by id/);
    assert.match(readFileSync(join(dir, 'target/run/shop/models/marts/wide.sql'), 'utf8'), /^create table "main"\."wide" as \(/);
    assert.match(readFileSync(join(dir, 'target/run/shop/models/stg.sql'), 'utf8'), /^create or replace view "main"\."stg" as \(/);
    assert.ok(existsSync(join(dir, 'target/compiled/shop/models/schema.yml/unique_wide_id.sql')));
    assert.ok(!existsSync(join(dir, 'target/run/shop/models/after_bad.sql')), 'a skipped node ran nothing');
  });

  test('a project of our own format gets the same artifacts, and its next run does not read them as models', async () => {
    const dir = duckProject({ 'staging/a.sql': 'select 1 as id', 'b.sql': "select * from {{ ref('a') }}" });
    for (let i = 0; i < 2; i++) {
      const r = await build('run', dir, '--json');
      assert.equal(r.code, 0, r.err);
      assert.equal((JSON.parse(r.out) as { total: number }).total, 2);
    }
    const rr = read<RunResults>(dir, 'run_results.json');
    const m = read<Manifest>(dir, 'manifest.json');
    const ids = Object.keys(m.nodes).sort();
    assert.equal(ids.length, 2);
    assert.deepEqual(rr.results.map((x) => x.unique_id).sort(), ids);
    assert.ok(rr.results.every((x) => x.status === 'success' && x.timing.length === 2));
    const b = ids.find((x) => x.endsWith('.b'))!;
    assert.deepEqual(m.nodes[b]!.depends_on.nodes, [ids.find((x) => x.endsWith('.a'))]);
  });
});
