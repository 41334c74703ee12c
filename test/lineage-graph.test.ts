// The lineage picture shared by `service build graph` and the web
// console — nodes and edges of a compiled project, dagre's layered layout,
// SVG with every name escaped, DOT and Mermaid text, and the CLI verb.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { FAST_LAYOUT_NODES, layoutLineage, withLayoutStatuses } from '../engine/lineage/layout-lineage.js';
import { withStatuses, type LineageGraph } from '../engine/lineage/lineage-graph.js';
import { projectLineage } from '../engine/lineage/project-lineage.js';
import { escapeXml, lineageDot, lineageMermaid, lineageSvg, STATUS_FILL } from '../engine/lineage/render-lineage.js';
import { runMain } from './helpers/cli-daemon.js';

const quiet = { log: () => {}, enabled: () => false };
const SHOP_EDGES = ['raw_customers>stg_customers', 'raw_orders>stg_orders', 'stg_customers>fct_orders', 'stg_orders>fct_orders', 'fct_orders>rpt_revenue'].sort();

test('the example shop project: 6 nodes (2 seeds), its 5 dependency edges, dependencies laid out left of their dependents', () => {
  const { graph } = projectLineage({ path: 'examples/shop' }, quiet);
  assert.deepEqual(graph.nodes.map((n) => `${n.name}:${n.kind}`).sort(), ['fct_orders:model', 'raw_customers:seed', 'raw_orders:seed', 'rpt_revenue:model', 'stg_customers:model', 'stg_orders:model']);
  assert.deepEqual(graph.edges.map((e) => `${e.from}>${e.to}`).sort(), SHOP_EDGES);
  const layout = layoutLineage(graph);
  const x = new Map(layout.nodes.map((n) => [n.name, n.x]));
  for (const e of layout.edges) {
    assert.ok(x.get(e.from)! < x.get(e.to)!, `${e.from} left of ${e.to}`);
    assert.ok(e.points.length >= 2);
  }
  assert.ok(layout.width > 0 && layout.height > 0);
});

test('--select keeps the selected nodes and only the edges between them', () => {
  const { graph } = projectLineage({ path: 'examples/shop', select: ['+fct_orders'] }, quiet);
  assert.deepEqual(graph.nodes.map((n) => n.name).sort(), ['fct_orders', 'raw_customers', 'raw_orders', 'stg_customers', 'stg_orders']);
  assert.ok(!graph.edges.some((e) => e.to === 'rpt_revenue'));
});

const hostile: LineageGraph = {
  nodes: [
    { name: 'a<script>alert(1)</script>', kind: 'model', fullName: 'x."a<script>"', file: 'a.sql', mode: 'view' },
    { name: 'b"&\'', kind: 'seed', fullName: 'x.b', file: 'b.csv', mode: 'seed' },
  ],
  edges: [{ from: 'b"&\'', to: 'a<script>alert(1)</script>' }],
};

test('SVG: every name is escaped (in text, titles, data attributes and links); statuses colour the boxes', () => {
  const svg = lineageSvg(layoutLineage(withStatuses(hostile, new Map([['x.b', 'error']]))), { href: (n) => `/ui/lineage/node?name=${encodeURIComponent(n)}&x=1` });
  assert.ok(!svg.includes('<script>'), 'no raw tag');
  assert.ok(svg.includes('a&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(svg.includes('data-name="b&quot;&amp;&#39;"'));
  assert.ok(svg.includes('&amp;x=1"'), 'link query escaped');
  assert.match(svg, new RegExp(`data-name="b&quot;&amp;&#39;" data-kind="seed" data-status="error">.*fill="${STATUS_FILL.error}"`, 's'));
  assert.match(svg, /data-status="none">/);
  assert.equal(escapeXml(`<>&"'`), '&lt;&gt;&amp;&quot;&#39;');
});

test('DOT and Mermaid: quoted names, edges, status colours', () => {
  const g = withStatuses({ nodes: [{ name: 'm1', kind: 'seed', fullName: 'p.m1', file: 'm1.csv', mode: 'seed' }, { name: 'm"2', kind: 'model', fullName: 'p.m2', file: 'm2.sql', mode: 'table' }], edges: [{ from: 'm1', to: 'm"2' }] }, new Map([['p.m2', 'error']]));
  assert.equal(
    lineageDot(g),
    [
      'digraph lineage {',
      '  rankdir=LR;',
      '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="monospace"];',
      '  "m1" [fillcolor="#ffffff", color="#4b5563", shape=cylinder];',
      '  "m\\"2" [fillcolor="#f8c9c4", color="#c0281b"];',
      '  "m1" -> "m\\"2";',
      '}',
      '',
    ].join('\n'),
  );
  assert.equal(lineageMermaid(g), ['flowchart LR', '  n0[("m1")]', '  n1["m#quot;2"]', '  n0 --> n1', '  classDef error fill:#f8c9c4,stroke:#c0281b', '  class n1 error', ''].join('\n'));
});

test('service build graph: svg (default), dot and mermaid on stdout; a bad --format is a usage error', async () => {
  const svg = await runMain(['build', 'graph', 'examples/shop']);
  assert.equal(svg.code, 0, svg.err);
  assert.equal(svg.out.match(/<g class="node"/g)?.length, 6);
  assert.equal(svg.out.match(/<path class="edge"/g)?.length, 5);
  const dot = await runMain(['build', 'graph', 'examples/shop', '--format', 'dot']);
  assert.equal(dot.code, 0);
  assert.ok(dot.out.includes('"stg_orders" -> "fct_orders";'));
  const mermaid = await runMain(['build', 'graph', 'examples/shop', '--format=mermaid', '-s', 'rpt_revenue']);
  assert.equal(mermaid.out, 'flowchart LR\n  n0["rpt_revenue"]\n');
  const bad = await runMain(['build', 'graph', 'examples/shop', '--format', 'png']);
  assert.equal(bad.code, 2);
  assert.equal(bad.err, `error: --format must be svg, dot or mermaid, got "png"\nRun 'service build graph --help' for usage.\n`);
  const missing = await runMain(['build', 'graph', 'no/such/dir']);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /^fatal: /);
  const help = await runMain(['build', 'graph', '--help']);
  assert.match(help.out, /--format svg\|dot\|mermaid\s+output format \(default svg\)/);
});

test('lineage.view on a worker thread: the same graph and layout as in this thread, a node’s compiled SQL; a big graph is laid out too', async () => {
  const { TaskPool } = await import('../actors/pool.js');
  const { lineageView } = await import('../engine/lineage/lineage-view.js');
  const req = { path: resolve('examples/shop'), layout: true, node: 'FCT_ORDERS' };
  const pool = new TaskPool({ maxThreads: 1, minThreads: 0 });
  try {
    const remote = await pool.run({ type: 'lineage.view', ...req });
    assert.deepEqual(remote, lineageView(req));
    assert.equal(remote.layout?.nodes.length, 6);
    assert.equal(remote.detail?.kind, 'model');
    assert.match(remote.detail?.sql ?? '', /stg_orders/);
    assert.ok(!(remote.detail?.sql ?? '').includes('ref('));
    const bare = await pool.run({ type: 'lineage.view', path: req.path, layout: false });
    assert.equal(bare.layout, undefined);
    assert.equal(bare.detail, undefined);
    await assert.rejects(pool.run({ type: 'lineage.view', path: resolve('no/such/dir'), layout: true }), (err: Error) => /no\/such\/dir/.test(err.message));
  } finally {
    await pool.destroy();
  }
  // Past FAST_LAYOUT_NODES the cheaper ranking is used; every edge still points right.
  const nodes = Array.from({ length: FAST_LAYOUT_NODES + 50 }, (_, i) => ({ name: `m${i}`, kind: 'model' as const, fullName: `s.m${i}`, file: `m${i}.sql`, mode: 'view' }));
  const edges = nodes.slice(1).map((n, i) => ({ from: `m${Math.floor(i / 3)}`, to: n.name }));
  const big = layoutLineage({ nodes, edges });
  const x = new Map(big.nodes.map((n) => [n.name, n.x]));
  for (const e of edges) assert.ok(x.get(e.from)! < x.get(e.to)!, `${e.from} left of ${e.to}`);
  const colored = withLayoutStatuses(big, new Map([['s.m7', 'error']]));
  assert.equal(colored.nodes.find((n) => n.name === 'm7')?.status, 'error');
  assert.equal(colored.nodes[0]!.x, big.nodes[0]!.x, 'statuses do not move nodes');
});
