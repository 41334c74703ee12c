/**
 * Model-based test of the build-run supervisor (actors/supervisor.ts): random
 * DAGs driven through the pure `transition()` by random orders of task
 * completions, failures (retryable or not), duplicate and stale results and
 * cancellation (before the start or mid-run). After every transition an
 * independent model of the run checks the invariants the runtime relies on:
 *
 *   - every node gets exactly one `node.finish`, the run exactly one
 *     `run.finish`, and nothing happens after it;
 *   - never more tasks in flight than min(threads, nodes), and a free slot is
 *     never left idle while a node is ready (unless halted or cancelling);
 *   - a node is dispatched only once every selected dependency succeeded (or
 *     was preset-skipped without cascade), and at most maxAttempts times;
 *   - an error or a cascading skip skips every dependent, transitively
 *     (up to a preset skip without cascade, whose own dependents may run);
 *   - fail-fast: after the first error nothing new starts (no dispatch, no
 *     retry) and every node not started is skipped in that same transition;
 *   - cancel: every in-flight attempt gets a `cancel.task`, nothing new
 *     starts, results then arriving record the `cancelled` error;
 *   - a message for anything but a node's current running attempt changes
 *     nothing; the input state is never mutated (it is deep-frozen).
 *
 * The generator is a seeded PRNG written here, so a run is reproducible: a
 * failure names its case seed; replay it alone with
 *   SUPERVISOR_MODEL_SEED=<seed> node --import tsx --test test/supervisor-model.test.ts
 * (SUPERVISOR_MODEL_CASES=<n> runs more cases from the fixed master seed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SerializedError } from '../engine/errors.js';
import type { FinalStatus, RunEffect, RunInput, RunMessage, RunNodeInput, RunResult } from '../actors/run-protocol.js';
import type { RunState } from '../actors/supervisor.js';
import { CANCELLED_ERROR, createRun, transition } from '../actors/supervisor.js';

type Node = { readonly name: string };
type Result = { readonly rows: number };

const MASTER_SEED = 0x2f6a_91c3;
const CASES = Number(process.env.SUPERVISOR_MODEL_CASES ?? 500);

// ── seeded generator ─────────────────────────────────────────────────────────

/** mulberry32: a small 32-bit PRNG, good enough to spread test cases. */
class Rand {
  #a: number;
  constructor(seed: number) {
    this.#a = seed >>> 0;
  }
  next(): number {
    let t = (this.#a = (this.#a + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const caseSeed = (k: number): number => (MASTER_SEED + Math.imul(k, 0x9e3779b9)) >>> 0;

interface Case {
  readonly input: RunInput<Node>;
  readonly cancelBeforeStart: boolean;
  /** Per step, the chance that a `run.cancel` is sent (0 for most cases). */
  readonly cancelRate: number;
  readonly failRate: number;
  readonly retryableRate: number;
  /** Per step, the chance of a message the supervisor must drop. */
  readonly noiseRate: number;
}

function generateCase(r: Rand): Case {
  const n = 1 + r.int(14);
  const density = r.next() * 0.6;
  const nodes: RunNodeInput<Node>[] = [];
  for (let i = 0; i < n; i++) {
    const deps: string[] = [];
    for (let j = 0; j < i; j++) if (r.chance(density)) deps.push(`n${j}`);
    if (deps.length > 0 && r.chance(0.1)) deps.push(deps[0]!); // a repeated dependency counts once
    if (r.chance(0.1)) deps.push(`outside${i}`); // not selected: never waited for
    const preset = r.chance(0.1) ? { presetStatus: 'skipped' as const, cascade: r.chance(0.5) } : {};
    nodes.push({ id: `n${i}`, deps: r.chance(0.5) ? deps : deps.reverse(), node: { name: `n${i}` }, ...preset });
  }
  return {
    input: {
      nodes,
      threads: r.pick([0, -2, 1, 1, 1.7, 2, 2, 3, 4, 5, 8, 16]),
      failFast: r.chance(0.4),
      maxAttempts: r.pick([undefined, 1, 2, 3]),
    },
    cancelBeforeStart: r.chance(0.05),
    cancelRate: r.chance(0.25) ? r.next() * 0.15 : 0,
    failRate: r.pick([0, 0.05, 0.2, 0.5]),
    retryableRate: r.pick([0, 0.3, 0.8]),
    noiseRate: r.pick([0, 0.1]),
  };
}

// ── model ────────────────────────────────────────────────────────────────────

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (!(value instanceof Map)) for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** What the generated cases exercised, so that the run proves it covered every path. */
interface Coverage {
  runs: number;
  errors: number;
  failFastHalts: number;
  cancelsMidRun: number;
  cancelsBeforeStart: number;
  retries: number;
  dropped: number;
  presetSkips: number;
  cascadeSkips: number;
  fullSlots: number;
}

const newCoverage = (): Coverage => ({
  runs: 0, errors: 0, failFastHalts: 0, cancelsMidRun: 0, cancelsBeforeStart: 0,
  retries: 0, dropped: 0, presetSkips: 0, cascadeSkips: 0, fullSlots: 0,
});

/** Drives one case and checks every transition against an independent account of the run. */
class ModelRun {
  state: RunState<Node, Result>;
  now = 0;
  readonly ids: readonly string[];
  readonly deps = new Map<string, readonly string[]>();
  readonly dependents = new Map<string, string[]>();
  readonly presetNoCascade = new Set<string>();
  readonly workers: number;
  readonly maxAttempts: number;
  readonly failFast: boolean;
  /** Task id → attempt currently dispatched and not yet answered. */
  readonly inFlight = new Map<string, number>();
  readonly dispatches = new Map<string, number>();
  readonly final = new Map<string, FinalStatus>();
  readonly delivered: RunMessage<Result>[] = [];
  readonly log: string[] = [];
  started = false;
  cancelled = false;
  halted = false;
  result: RunResult<Node, Result> | undefined;

  constructor(readonly input: RunInput<Node>, readonly cov: Coverage) {
    this.state = createRun<Node, Result>(input);
    this.ids = input.nodes.map((n) => n.id);
    const selected = new Set(this.ids);
    for (const n of input.nodes) {
      this.deps.set(n.id, [...new Set(n.deps)].filter((d) => selected.has(d)));
      this.dependents.set(n.id, []);
      if (n.presetStatus === 'skipped' && n.cascade === false) this.presetNoCascade.add(n.id);
    }
    for (const [id, ds] of this.deps) for (const d of ds) this.dependents.get(d)!.push(id);
    const threads = input.threads > 0 ? Math.floor(input.threads) : 4;
    this.workers = Math.min(threads, this.ids.length);
    this.maxAttempts = Math.max(1, Math.floor(input.maxAttempts ?? 1));
    this.failFast = input.failFast ?? false;
  }

  /** Whether the supervisor must act on `m` (otherwise it must change nothing). */
  accepts(m: RunMessage<Result>): boolean {
    if (this.result !== undefined) return false;
    switch (m.type) {
      case 'run.start':
        return !this.started;
      case 'run.cancel':
        return !this.cancelled;
      default:
        return this.inFlight.get(m.taskId) === m.attempt;
    }
  }

  send(m: RunMessage<Result>): void {
    this.log.push(JSON.stringify(m));
    const before = deepFreeze(this.state);
    const accepted = this.accepts(m);
    const { state, effects } = transition(before, m, this.now);
    if (!accepted) {
      assert.equal(state, before, `dropped message changed the state: ${JSON.stringify(m)}`);
      assert.deepEqual(effects, [], `dropped message had effects: ${JSON.stringify(m)}`);
      this.cov.dropped++;
      return;
    }
    this.delivered.push(m);
    if (m.type === 'run.start') this.started = true;
    if (m.type === 'run.cancel') {
      this.cancelled = true;
      if (this.started) this.cov.cancelsMidRun++;
      else this.cov.cancelsBeforeStart++;
      const expected = this.ids.filter((id) => this.inFlight.has(id)).map((taskId) => ({ type: 'cancel.task', taskId, attempt: this.inFlight.get(taskId) }));
      assert.deepEqual(effects.filter((e) => e.type === 'cancel.task'), this.started ? expected : [], 'run.cancel: one cancel.task per in-flight attempt');
    }
    if (m.type === 'task.completed' || m.type === 'task.failed') this.inFlight.delete(m.taskId);
    this.state = state;
    for (const e of effects) this.apply(m, e);
    this.checkState();
  }

  apply(m: RunMessage<Result>, e: RunEffect<Node, Result>): void {
    assert.equal(this.result, undefined, `effect after run.finish: ${JSON.stringify(e)}`);
    if (e.type === 'dispatch') return this.onDispatch(m, e.taskId, e.attempt);
    if (e.type === 'cancel.task') {
      assert.equal(m.type, 'run.cancel', 'cancel.task only answers run.cancel');
      return assert.equal(this.inFlight.get(e.taskId), e.attempt, `cancel.task for ${e.taskId}#${e.attempt}, which is not in flight`);
    }
    const ev = e.event;
    switch (ev.type) {
      case 'node.finish':
        return this.onFinish(m, ev.id, ev.status, ev.error);
      case 'node.retry':
        assert.ok(m.type === 'task.failed' && m.taskId === ev.id && m.error.retryable, `retry of ${ev.id} not caused by its retryable failure`);
        assert.ok(!this.halted && !this.cancelled, `retry of ${ev.id} while halted or cancelling`);
        this.cov.retries++;
        return;
      case 'run.cancelling':
        assert.equal(m.type, 'run.cancel');
        return assert.equal(ev.running, this.inFlight.size, 'run.cancelling counts the nodes in flight');
      case 'run.finish':
        return this.onRunFinish(ev.result);
      case 'node.start':
        assert.ok(!this.halted && !this.cancelled, `node.start of ${ev.id} while halted or cancelling`);
        return;
    }
  }

  onDispatch(m: RunMessage<Result>, id: string, attempt: number): void {
    assert.ok(!this.halted, `dispatch of ${id} after fail-fast tripped`);
    assert.ok(!this.cancelled, `dispatch of ${id} while cancelling`);
    assert.ok(!this.final.has(id), `dispatch of ${id}, which already finished`);
    assert.ok(!this.inFlight.has(id), `dispatch of ${id}, which is already in flight`);
    const n = (this.dispatches.get(id) ?? 0) + 1;
    this.dispatches.set(id, n);
    assert.equal(attempt, n, `dispatch of ${id}: attempt ${attempt}, expected ${n}`);
    assert.ok(n <= this.maxAttempts, `${id} dispatched ${n} times with maxAttempts ${this.maxAttempts}`);
    if (n > 1) assert.ok(m.type === 'task.failed' && m.taskId === id, `re-dispatch of ${id} not caused by its own failure`);
    for (const d of this.deps.get(id)!) {
      const s = this.final.get(d);
      assert.ok(s === 'success' || (s === 'skipped' && this.presetNoCascade.has(d)), `${id} started while its dependency ${d} is ${s ?? 'unfinished'}`);
    }
    this.inFlight.set(id, attempt);
    assert.ok(this.inFlight.size <= this.workers, `${this.inFlight.size} tasks in flight with ${this.workers} workers`);
    if (this.inFlight.size === this.workers) this.cov.fullSlots++;
  }

  onFinish(m: RunMessage<Result>, id: string, status: FinalStatus, error: SerializedError | undefined): void {
    assert.ok(!this.final.has(id), `${id} finished twice`);
    this.final.set(id, status);
    if (status === 'skipped') {
      assert.ok(!this.dispatches.has(id) && !this.inFlight.has(id), `${id} skipped after it was dispatched`);
      if (this.input.nodes.find((n) => n.id === id)!.presetStatus === 'skipped') this.cov.presetSkips++;
      else this.cov.cascadeSkips++;
      return;
    }
    assert.ok((m.type === 'task.completed' || m.type === 'task.failed') && m.taskId === id, `${id} finished ${status} without its own result`);
    if (this.cancelled) {
      assert.equal(status, 'error', `${id}: a result arriving while cancelling is an error`);
      assert.deepEqual(error, CANCELLED_ERROR);
    } else if (m.type === 'task.completed') {
      assert.equal(status, 'success', `${id} completed but finished ${status}`);
    } else {
      assert.equal(status, 'error', `${id} failed but finished ${status}`);
      assert.deepEqual(error, m.error);
      assert.ok(!m.error.retryable || this.dispatches.get(id)! >= this.maxAttempts || this.halted, `${id} not retried with attempts left`);
      this.cov.errors++;
      if (this.failFast && !this.halted) {
        this.halted = true;
        this.cov.failFastHalts++;
      }
    }
  }

  onRunFinish(result: RunResult<Node, Result>): void {
    this.result = result;
    assert.equal(this.inFlight.size, 0, 'run finished with tasks in flight');
    assert.equal(this.final.size, this.ids.length, 'run finished before every node did');
    assert.deepEqual(result.records.map((r) => `${r.id}:${r.status}`), this.ids.map((id) => `${id}:${this.final.get(id)}`));
    const counts = { success: 0, error: 0, skipped: 0 };
    for (const s of this.final.values()) counts[s]++;
    assert.deepEqual(result.counts, counts);
    assert.equal(result.cancelled, this.cancelled);
  }

  /** State-level invariants after each accepted transition. */
  checkState(): void {
    const records = this.state.records.toArray();
    assert.equal(this.state.running, this.inFlight.size, 'state.running differs from the tasks in flight');
    let ready = 0;
    for (const r of records) {
      if (r.status === 'running') assert.equal(this.inFlight.get(r.id), r.attempt, `${r.id} running but not in flight`);
      else assert.ok(!this.inFlight.has(r.id), `${r.id} in flight but ${r.status}`);
      if (r.status === 'ready' || r.status === 'pending') {
        assert.ok(!((this.halted || this.cancelled) && this.started), `${r.id} still ${r.status} after fail-fast or cancel`);
        const waitsFor = this.deps.get(r.id)!.filter((d) => this.final.get(d) !== 'success' && !(this.final.get(d) === 'skipped' && this.presetNoCascade.has(d)));
        if (r.status === 'ready') assert.deepEqual(waitsFor, [], `${r.id} ready while waiting for ${waitsFor.join(', ')}`);
        else if (this.started) assert.notDeepEqual(waitsFor, [], `${r.id} pending though every dependency is done`);
      }
      if (r.status === 'ready') ready++;
    }
    if (ready > 0 && !this.halted && !this.cancelled) assert.equal(this.inFlight.size, this.workers, 'a node is ready while a worker slot is idle');
    assert.equal(this.state.phase === 'finished', this.result !== undefined, 'phase finished without run.finish (or the reverse)');
  }

  /** After the run: errors and cascading skips took every dependent with them. */
  checkEnd(): void {
    assert.ok(this.result !== undefined, 'run never finished');
    for (const [id, status] of this.final) {
      if (status === 'success' || this.presetNoCascade.has(id)) continue;
      const stack = [...this.dependents.get(id)!];
      while (stack.length > 0) {
        const j = stack.pop()!;
        assert.equal(this.final.get(j), 'skipped', `${j} depends on ${id} (${status}) but finished ${this.final.get(j)}`);
        // A preset skip without cascade (a seed under --no-seeds) lets its dependents run.
        if (!this.presetNoCascade.has(j)) stack.push(...this.dependents.get(j)!);
      }
    }
  }
}

// ── driver ───────────────────────────────────────────────────────────────────

/** A message the supervisor must drop: a duplicate, a wrong attempt or an unknown task. */
function noise(r: Rand, run: ModelRun): RunMessage<Result> {
  const results = run.delivered.filter((m) => m.type !== 'run.start' && m.type !== 'run.cancel');
  const kind = r.int(3);
  if (kind === 0 && results.length > 0) return r.pick(results);
  if (kind === 1 && run.inFlight.size > 0) {
    const [taskId, attempt] = r.pick([...run.inFlight]);
    return { type: 'task.completed', taskId, attempt: attempt + r.pick([-1, 1, 2]), result: { rows: 0 } };
  }
  return { type: 'task.failed', taskId: `ghost${r.int(3)}`, attempt: 1, error: { name: 'Error', code: 'node', message: 'ghost', retryable: false } };
}

function runCase(seed: number, cov: Coverage): void {
  const r = new Rand(seed);
  const c = generateCase(r);
  const run = new ModelRun(c.input, cov);
  cov.runs++;
  try {
    if (c.cancelBeforeStart) run.send({ type: 'run.cancel' });
    run.send({ type: 'run.start' });
    for (let step = 0; run.result === undefined; step++) {
      assert.ok(step < 1000, 'no progress after 1000 steps');
      assert.ok(run.inFlight.size > 0, 'run neither finished nor has a task in flight (stalled)');
      run.now += r.int(5);
      if (r.chance(c.noiseRate)) run.send(noise(r, run));
      else if (r.chance(c.cancelRate)) run.send({ type: 'run.cancel' });
      else {
        const [taskId, attempt] = r.pick([...run.inFlight]);
        if (r.chance(c.failRate)) {
          const error: SerializedError = { name: 'SqlError', code: 'node', message: `${taskId} broke`, retryable: r.chance(c.retryableRate) };
          run.send({ type: 'task.failed', taskId, attempt, error });
        } else run.send({ type: 'task.completed', taskId, attempt, result: { rows: attempt } });
      }
    }
    // Once finished, every message is dropped.
    run.send({ type: 'run.cancel' });
    run.send({ type: 'run.start' });
    if (run.delivered.length > 2) run.send(r.pick(run.delivered));
    run.checkEnd();
  } catch (err) {
    const detail = `${(err as Error).message}\n  input: ${JSON.stringify(c.input)}\n  last messages:\n    ${run.log.slice(-12).join('\n    ')}`;
    throw new Error(`supervisor model: case seed ${seed} failed (replay: SUPERVISOR_MODEL_SEED=${seed}): ${detail}`, { cause: err });
  }
}

describe('supervisor: model-based random runs', () => {
  const only = process.env.SUPERVISOR_MODEL_SEED;

  it(only ? `replays case seed ${only}` : `holds every invariant over ${CASES} random runs (master seed ${MASTER_SEED})`, (t) => {
    const cov = newCoverage();
    const seeds = only ? [Number(only)] : Array.from({ length: CASES }, (_, k) => caseSeed(k));
    for (const seed of seeds) runCase(seed, cov);
    if (only) return;
    t.diagnostic(`exercised: ${JSON.stringify(cov)}`);
    // The generator must reach every path it is meant to check, or a pass proves little.
    for (const [path, n] of Object.entries(cov)) assert.ok(n > 0, `no case exercised ${path}: ${JSON.stringify(cov)}`);
    assert.equal(cov.runs, CASES);
  });
});
