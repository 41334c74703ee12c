// The console's charts and the data behind them, without a browser: a build
// step's nodes read from its stored state (single project, sub-projects,
// records stored before start times were kept), the Gantt and history SVGs
// (escaped names, no style attributes, bars placed on the time line), the
// focus of a lineage on one node, and the time axis.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { focusGraph, type LineageGraph } from '../engine/lineage/lineage-graph.js';
import { axisTicks, secondsLabel } from '../http/ui/charts/axis.js';
import { ganttSvg } from '../http/ui/charts/gantt.js';
import { historySvg } from '../http/ui/charts/history.js';
import { buildStepNodes } from '../http/ui/pages/build-nodes.js';

const rec = (name: string, status: string, start: string | null, duration: number, thread: number | null, rows = 0) => ({ name, type: 'model', mode: 'table', duration, status, error: status === 'error' ? 'boom' : '', rows, bytes: 0, start_time: start, thread });

test('build step nodes: placed on the step time line in start order, with parallelism and the time before the first node', () => {
  const nodes = buildStepNodes({
    step_id: 'transform',
    type: 'build',
    start_time: '2026-01-01T00:00:00.000Z',
    end_time: '2026-01-01T00:00:03.000Z',
    state: {
      path: '/p',
      target: 'W',
      command: 'run',
      results: [rec('public.b', 'success', '2026-01-01T00:00:01.000Z', 1, 7, 5), rec('public.a', 'success', '2026-01-01T00:00:00.500Z', 1, 8, 3), rec('public.c', 'skipped', null, 0, null)],
    },
  });
  assert.ok(nodes);
  assert.deepEqual(
    nodes.rows.map((r) => [r.name, r.startMs, r.offset, r.threadText, r.rows]),
    [
      ['public.a', 500, '+0.50 s', '8', 3],
      ['public.b', 1000, '+1.00 s', '7', 5],
      ['public.c', undefined, '', '', 0],
    ],
  );
  assert.equal(nodes.beforeFirst, 0.5);
  assert.equal(nodes.threads, 2);
  // 2 s of node time over 1.5 s from the first start to the last end.
  assert.equal(nodes.parallelism, 1.33);
  assert.deepEqual(nodes.span, { originMs: Date.parse('2026-01-01T00:00:00.000Z'), lengthMs: 3000 });
});

test('build step nodes: sub-projects are read with their directory; records without start times still list; other steps and commands give nothing', () => {
  const subs = buildStepNodes({
    step_id: 's',
    type: 'build',
    start_time: null,
    end_time: null,
    state: { path: '/repo', command: 'run', sub_projects: [{ path: '/repo/hr', results: [rec('public.people', 'error', '2026-01-01T00:00:00.000Z', 0.1, 3)] }, { path: '/repo/sales', results: [{ name: 'public.orders', type: 'model', mode: 'view', duration: 0.2, status: 'success', error: '', rows: 0, bytes: 0 }] }] },
  });
  assert.deepEqual(
    subs?.rows.map((r) => [r.name, r.project, r.startMs]),
    [
      ['public.people', 'hr', 0],
      ['public.orders', 'sales', undefined],
    ],
  );
  const old = buildStepNodes({ step_id: 's', type: 'build', start_time: null, end_time: null, state: { path: '/p', command: 'run', results: [{ name: 'x', type: 'model', mode: 'view', duration: 1, status: 'success', error: '', rows: 0, bytes: 0 }] } });
  assert.equal(old?.span, undefined, 'no time line without start times');
  assert.equal(old?.rows.length, 1);
  assert.equal(buildStepNodes({ step_id: 's', type: 'build', start_time: null, end_time: null, state: { command: 'list', results: [] } }), undefined);
  assert.equal(buildStepNodes({ step_id: 's', type: 'query', start_time: null, end_time: null, state: { command: 'run', results: [rec('a', 'success', null, 1, 1)] } }), undefined);
});

test('Gantt SVG: names escaped, no style attribute, bars where the nodes ran; a node that never ran has no bar', () => {
  const svg = ganttSvg(
    [
      { name: '<img src=x onerror=alert(1)>', status: 'success', duration: 1, startMs: 0, thread: 2 },
      { name: 'b', status: 'error', duration: 0.5, startMs: 1000, thread: null },
      { name: 'c', status: 'skipped', duration: 0, thread: null },
    ],
    2000,
  );
  assert.ok(!svg.includes('<img'), 'escaped');
  assert.match(svg, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.ok(!/\sstyle=/.test(svg), 'no inline style (the CSP forbids them)');
  const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="14"/g)].map((m) => [Number(m[1]), Number(m[2])]);
  // Plot from x=306 over 640 px for 2000 ms.
  assert.deepEqual(bars, [
    [306, 320],
    [626, 160],
  ]);
  assert.match(svg, /data-name="c" data-status="skipped" data-thread=""><title>/);
  assert.match(svg, /skipped \(not run\)/);
});

test('history SVG: one linked bar per run in the order given, heights by duration, escaped', () => {
  const svg = historySvg(
    [
      { execId: 'A1', status: 'success', duration: 2, startTime: '2026-01-01T00:00:00.000Z' },
      { execId: 'B2', status: 'error', duration: 1, startTime: '2026-01-01T01:00:00.000Z', note: '<b>' },
      { execId: 'C3', status: 'running', duration: null, startTime: '2026-01-01T02:00:00.000Z' },
    ],
    'runs of <x>',
  );
  assert.deepEqual([...svg.matchAll(/href="\/ui\/executions\/(\w+)"/g)].map((m) => m[1]), ['A1', 'B2', 'C3']);
  const heights = [...svg.matchAll(/<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"/g)].map((m) => Number(m[1]));
  assert.equal(heights[0], 120);
  assert.equal(heights[1], 60);
  assert.equal(heights[2], 3, 'a running execution gets a stub');
  assert.ok(!svg.includes('<b>') && !svg.includes('<x>'));
  assert.ok(!/\sstyle=/.test(svg));
});

test('focusGraph keeps a node with its ancestors and descendants only; names match case-insensitively', () => {
  const node = (name: string) => ({ name, kind: 'model' as const, fullName: `public.${name}`, file: `${name}.sql`, mode: 'table' });
  const g: LineageGraph = {
    nodes: ['a', 'b', 'c', 'd', 'e', 'x'].map(node),
    edges: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'd' },
      { from: 'e', to: 'c' },
      { from: 'a', to: 'x' },
    ],
  };
  const f = focusGraph(g, 'B');
  assert.deepEqual(f.nodes.map((n) => n.name), ['a', 'b', 'c', 'd']);
  assert.deepEqual(f.edges, [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
    { from: 'c', to: 'd' },
  ]);
  assert.deepEqual(focusGraph(g, 'c').nodes.map((n) => n.name), ['a', 'b', 'c', 'd', 'e']);
});

test('time axis: round steps, labels in s and min', () => {
  assert.deepEqual(axisTicks(1500), [0, 500, 1000, 1500]);
  assert.deepEqual(axisTicks(6000), [0, 1000, 2000, 3000, 4000, 5000, 6000]);
  assert.deepEqual(axisTicks(1000).slice(0, 3), [0, 200, 400]);
  assert.equal(secondsLabel(0), '0 s');
  assert.equal(secondsLabel(250), '0.25 s');
  assert.equal(secondsLabel(120_000), '2 min');
  assert.equal(secondsLabel(90_000), '1 min 30 s');
});
