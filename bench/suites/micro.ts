/**
 * Suite 5 — micro-benchmarks (tinybench), in this process:
 *
 * - selector evaluation on a 10,000-node DAG, cold (`selectNodes` on a graph
 *   it has not indexed yet, as in a CLI process) against a plain filter /
 *   depth-first walk that also builds its adjacency lists from the graph;
 * - ready-queue transitions per second: a whole run driven through the pure
 *   supervisor `transition()` (every task completing at once, --threads 4),
 *   against a mutable ready queue with the same FIFO policy; and the full
 *   in-process runtime (`RunActor`: mailbox, effects, events, promises) with
 *   no-op tasks against a promise-per-node scheduler;
 * - template render per model: the compile pipeline of one model
 *   (`prepareTemplate` + `renderModel`: config blocks, macros, `@name`,
 *   Jinja, ref rewriting, statement split) with a fresh engine, and the
 *   cached re-render of incremental runs, against stock nunjucks compiling
 *   and rendering the same text.
 */
import { join } from 'node:path';
import nunjucks from 'nunjucks';
import { Bench } from 'tinybench';
import { prepareBuild } from '../../engine/build-plan/prepare.js';
import type { CompiledModel } from '../../engine/compile/compile.js';
import { DEFAULT_INCREMENTAL, prepareTemplate, renderModel } from '../../engine/compile/render-model.js';
import type { Graph, GraphNode } from '../../engine/dag/graph.js';
import { selectNodes } from '../../engine/dag/select.js';
import type { Logger } from '../../engine/log.js';
import { createNunjucksEngine } from '../../engine/template/nunjucks-engine.js';
import type { RunInput } from '../../actors/run-protocol.js';
import { RunActor } from '../../actors/run-actor.js';
import { createRun, transition, type RunState } from '../../actors/supervisor.js';
import { folderOf, generateProject, modelName } from '../generate-project.js';
import { randomDag } from '../lib/random-dag.js';
import { int, ms, rate, type Row } from '../lib/report.js';
import { scheduleDag } from '../lib/sql-replay.js';
import type { SuiteContext } from '../lib/suite-context.js';

const silent: Logger = { enabled: () => false, log: () => {} };

interface Measured {
  /** Mean ms per iteration. */
  readonly mean: number;
  readonly samples: number;
  /** Relative margin of error, %. */
  readonly rme: number;
}

/** Runs ours and the baseline as two tinybench tasks of one bench. */
async function pair(ctx: SuiteContext, name: string, ours: () => unknown, baseline: () => unknown, iterations = 64): Promise<{ ours: Measured; baseline: Measured }> {
  const bench = new Bench({
    name,
    time: ctx.quick ? 150 : 1000,
    iterations: ctx.quick ? Math.min(iterations, 8) : iterations,
    warmupTime: ctx.quick ? 50 : 250,
    warmupIterations: Math.min(iterations, ctx.quick ? 2 : 16),
    throws: true,
  });
  bench.add('ours', ours);
  bench.add('baseline', baseline);
  await bench.run();
  const get = (task: string): Measured => {
    const r = bench.getTask(task)!.result;
    if (r.state !== 'completed') throw new Error(`micro ${name}/${task}: ${r.state}`);
    return { mean: r.latency.mean, samples: r.latency.samplesCount, rme: r.latency.rme };
  };
  return { ours: get('ours'), baseline: get('baseline') };
}

// ── selectors ────────────────────────────────────────────────────────────────

function syntheticGraph(n: number): Graph {
  const deps = randomDag(n, 11);
  const nodes: GraphNode[] = deps.map((_, i) => {
    const name = modelName(i, n);
    const mode = i % 3 === 0 ? 'view' : 'full-refresh';
    return {
      name,
      kind: 'model',
      prodName: `${folderOf(i)}.${name}`,
      fullName: `${folderOf(i)}.${name}`,
      file: `${folderOf(i)}/${name}.sql`,
      discoveryPath: `${folderOf(i)}/${name}.sql`,
      tags: [`t${i % 7}`],
      config: { mode, materialized: mode, tags: [`t${i % 7}`] },
    };
  });
  const depMap = new Map(deps.map((d, i) => [modelName(i, n), d.map((p) => modelName(p, n))]));
  return { nodes, deps: depMap, disabled: new Set() };
}

/**
 * The least work a cold graph selection can do: index names, build adjacency
 * lists, walk. `+X+` = ancestors and descendants of X; `@X` = X, its
 * descendants, and the ancestors of all of those.
 */
function plainWalk(graph: Graph, root: string, form: 'plus' | 'at'): GraphNode[] {
  const index = new Map<string, number>();
  graph.nodes.forEach((node, i) => index.set(node.name.toLowerCase(), i));
  const parents: number[][] = graph.nodes.map(() => []);
  const children: number[][] = graph.nodes.map(() => []);
  graph.nodes.forEach((node, i) => {
    for (const d of graph.deps.get(node.name.toLowerCase()) ?? []) {
      const j = index.get(d)!;
      parents[i]!.push(j);
      children[j]!.push(i);
    }
  });
  const walk = (adj: readonly number[][], start: readonly number[]): Uint8Array => {
    const seen = new Uint8Array(adj.length);
    const stack = [...start];
    for (const s of start) seen[s] = 1;
    while (stack.length > 0) {
      for (const j of adj[stack.pop()!]!) {
        if (seen[j] === 0) {
          seen[j] = 1;
          stack.push(j);
        }
      }
    }
    return seen;
  };
  const start = [index.get(root)!];
  const down = walk(children, start);
  const up = form === 'plus' ? walk(parents, start) : walk(parents, [...down.keys()].filter((i) => down[i] === 1));
  return graph.nodes.filter((_, i) => down[i] === 1 || up[i] === 1);
}

async function selectorRows(ctx: SuiteContext): Promise<Row[]> {
  const n = 10_000;
  const graph = syntheticGraph(n);
  const cases: { item: string; baseline: () => GraphNode[] }[] = [
    { item: 'tag:t3', baseline: () => graph.nodes.filter((node) => node.tags.includes('t3')) },
    { item: `+${modelName(5000, n)}+`, baseline: () => plainWalk(graph, modelName(5000, n), 'plus') },
    { item: `@${modelName(2000, n)}`, baseline: () => plainWalk(graph, modelName(2000, n), 'at') },
  ];
  const rows: Row[] = [];
  for (const c of cases) {
    ctx.progress(`micro: selector ${c.item}`);
    const picked = selectNodes(graph, [c.item], []).length;
    const check = c.baseline().length;
    if (picked !== check) throw new Error(`micro selector ${c.item}: ours picked ${picked}, the baseline ${check}`);
    // A shallow copy is a new graph for the index cache: each selection indexes afresh, as the CLI does once per process.
    const m = await pair(ctx, c.item, () => selectNodes({ ...graph }, [c.item], []), c.baseline);
    rows.push({
      id: `micro.select.${c.item.replace(/[^a-z0-9]+/gi, '_')}`,
      label: `micro: select \`${c.item}\` on ${int(n)} nodes (${int(picked)} picked)`,
      ours: `${ms(m.ours.mean)} per selection`,
      baseline: `plain ${ms(m.baseline.mean)}`,
      ratio: m.ours.mean / m.baseline.mean,
      data: { nodes: n, picked, oursMs: m.ours.mean, baselineMs: m.baseline.mean, oursRme: m.ours.rme, baselineRme: m.baseline.rme },
    });
  }
  return rows;
}

// ── ready queue ──────────────────────────────────────────────────────────────

function runInput(deps: readonly (readonly number[])[], threads: number): RunInput<null> {
  return { nodes: deps.map((d, i) => ({ id: `n${i}`, deps: d.map((p) => `n${p}`), node: null })), threads };
}

/** A whole run through the pure supervisor: start, then complete tasks in dispatch order. Returns the transitions made. */
function driveSupervisor(input: RunInput<null>): number {
  let state: RunState<null, null> = createRun<null, null>(input);
  const inflight: { taskId: string; attempt: number }[] = [];
  let head = 0;
  let transitions = 0;
  const step = (m: Parameters<typeof transition<null, null>>[1]) => {
    const t = transition(state, m, transitions);
    state = t.state;
    transitions++;
    for (const e of t.effects) if (e.type === 'dispatch') inflight.push({ taskId: e.taskId, attempt: e.attempt });
  };
  step({ type: 'run.start' });
  while (state.phase !== 'finished') {
    const d = inflight[head++]!;
    step({ type: 'task.completed', taskId: d.taskId, attempt: d.attempt, result: null });
  }
  return transitions;
}

/** The same policy on mutable arrays: the least a ready queue can cost. */
function plainReadyQueue(deps: readonly (readonly number[])[], threads: number): number {
  const n = deps.length;
  const waiting = new Int32Array(n);
  const children: number[][] = deps.map(() => []);
  deps.forEach((d, i) => {
    waiting[i] = d.length;
    for (const p of d) children[p]!.push(i);
  });
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  const inflight: number[] = [];
  let readyHead = 0;
  let head = 0;
  let running = 0;
  let done = 0;
  let transitions = 1;
  const pump = () => {
    while (readyHead < ready.length && running < threads) {
      inflight.push(ready[readyHead++]!);
      running++;
    }
  };
  pump();
  while (done < n) {
    const i = inflight[head++]!;
    running--;
    done++;
    transitions++;
    for (const c of children[i]!) if (--waiting[c]! === 0) ready.push(c);
    pump();
  }
  return transitions;
}

async function readyQueueRows(ctx: SuiteContext): Promise<Row[]> {
  const rows: Row[] = [];
  // --quick: the large run on 3,000 nodes (10,000 take ≈3 s of the quick minute).
  for (const n of ctx.quick ? [1_000, 3_000] : [1_000, 10_000]) {
    ctx.progress(`micro: ready queue, ${int(n)} nodes`);
    const deps = randomDag(n, 13);
    const input = runInput(deps, 4);
    const transitions = driveSupervisor(input);
    if (plainReadyQueue(deps, 4) !== transitions) throw new Error('micro ready queue: transition counts differ');
    const m = await pair(ctx, `ready-${n}`, () => driveSupervisor(input), () => plainReadyQueue(deps, 4), n >= 10_000 ? 2 : 16);
    const ours = (transitions * 1000) / m.ours.mean;
    const base = (transitions * 1000) / m.baseline.mean;
    rows.push({
      id: `micro.ready.${n}`,
      label: `micro: ready-queue transitions, ${int(n)}-node run (supervisor)`,
      ours: `${rate(ours, 'transitions')} (${ms(m.ours.mean / transitions)} each)`,
      baseline: `plain queue ${rate(base, 'transitions')}`,
      ratio: m.ours.mean / m.baseline.mean,
      data: { nodes: n, transitions, oursRunMs: m.ours.mean, baselineRunMs: m.baseline.mean, oursPerSecond: ours, baselinePerSecond: base },
    });
  }
  const n = 1_000;
  ctx.progress(`micro: RunActor with no-op tasks, ${int(n)} nodes`);
  const deps = randomDag(n, 17);
  const input = runInput(deps, 4);
  const actor = () => new RunActor<null, null>(input, { execute: async () => null }).start();
  const plain = () => scheduleDag(deps, 4, async () => {});
  const m = await pair(ctx, 'actor', actor, plain, 16);
  rows.push({
    id: 'micro.actor.1000',
    label: `micro: in-process runtime (RunActor), ${int(n)} no-op tasks`,
    ours: `${ms(m.ours.mean / n)} per node (${ms(m.ours.mean)} per run)`,
    baseline: `promise scheduler ${ms(m.baseline.mean / n)} per node`,
    ratio: m.ours.mean / m.baseline.mean,
    data: { nodes: n, oursRunMs: m.ours.mean, baselineRunMs: m.baseline.mean, oursPerNodeMs: m.ours.mean / n },
  });
  return rows;
}

// ── template render ──────────────────────────────────────────────────────────

async function renderRows(ctx: SuiteContext): Promise<Row[]> {
  ctx.progress('micro: template render per model');
  const dir = join(ctx.work, 'micro-render');
  generateProject(dir, 200);
  const p = prepareBuild({ verb: 'list', path: dir, select: [], exclude: [] }, silent);
  const cp = p.compiled;
  const models = cp.project.models.slice(1, 101);
  const macros = cp.project.macros.map((m) => m.text).join('');
  const vars = cp.env.vars;
  const njContext = (name: string) => ({ ...vars, ref: (x: string) => x, config: () => '', is_incremental: () => false, incremental_where_cond: () => '1=1', this: name });
  const njEnv = () => new nunjucks.Environment([], { autoescape: false });
  let k = 0;
  // A unique trailing comment per render: V8 caches compiled code by source text, and a repeated
  // template would otherwise be compiled once, which no project of distinct models gets.
  const next = () => {
    const m = models[k % models.length]!;
    return { ...m, body: `${m.body}\n-- ${k++}` };
  };

  const cold = await pair(
    ctx,
    'render-cold',
    () => {
      const m = next();
      const env = { ...cp.env, engine: createNunjucksEngine() };
      return renderModel(env, m, prepareTemplate(env, m), DEFAULT_INCREMENTAL).sql;
    },
    () => {
      const m = next();
      return new nunjucks.Template(macros + m.body, njEnv(), m.name, true).render(njContext(m.name));
    },
    256,
  );
  // Cached: the incremental re-render path (template compiled once per model).
  const warmEnv = { ...cp.env, engine: createNunjucksEngine() };
  const prepared = models.map((m) => prepareTemplate(warmEnv, m));
  const stock = njEnv();
  const templates = models.map((m) => new nunjucks.Template(macros + m.body, stock, m.name, true));
  const cached = await pair(
    ctx,
    'render-cached',
    () => {
      const i = k++ % models.length;
      return renderModel(warmEnv, models[i]!, prepared[i]!, DEFAULT_INCREMENTAL).sql;
    },
    () => {
      const i = k++ % models.length;
      return templates[i]!.render(njContext(models[i]!.name));
    },
    1024,
  );
  const compiled = cp.nodes.filter((x): x is CompiledModel => x.kind === 'model').length;
  return [
    {
      id: 'micro.render.cold',
      label: '5. template render per model, first render (parse + compile + render)',
      ours: `${ms(cold.ours.mean)} per model`,
      baseline: `stock nunjucks ${ms(cold.baseline.mean)}`,
      ratio: cold.ours.mean / cold.baseline.mean,
      data: { models: models.length, projectModels: compiled, oursMs: cold.ours.mean, baselineMs: cold.baseline.mean },
    },
    {
      id: 'micro.render.cached',
      label: '5. template render per model, cached template (incremental re-render)',
      ours: `${ms(cached.ours.mean)} per model`,
      baseline: `stock nunjucks ${ms(cached.baseline.mean)}`,
      ratio: cached.ours.mean / cached.baseline.mean,
      data: { models: models.length, oursMs: cached.ours.mean, baselineMs: cached.baseline.mean },
    },
  ];
}

export async function micro(ctx: SuiteContext): Promise<Row[]> {
  return [...(await selectorRows(ctx)), ...(await readyQueueRows(ctx)), ...(await renderRows(ctx))];
}
