/**
 * Renders a compile's models on this thread and, for a large compile, on
 * render worker threads at the same time (render-worker.ts), and still
 * returns synchronously: compiling stays one synchronous call for every
 * host (command line, daemon, pipeline steps, lineage).
 *
 * The models are cut into chunks. The first share stays here; the rest are
 * posted to the workers (one job message each, render-job.ts) as each
 * worker's share. This thread renders from the first chunk on, and once
 * its share is done keeps taking chunks from the front of the workers'
 * shares, while each worker takes its own from the back; a chunk is taken
 * by one compare-and-swap in a shared block. So a worker that starts late
 * (its thread and modules take ≈0.1–0.2 s) or not at all costs only the
 * copy of its share: this thread renders what the worker did not reach.
 * Then this thread waits for the chunks the workers took: they are
 * BlockingThreads (engine/threads/blocking-thread.ts), whose answers are
 * read without the event loop. A chunk a worker took but never answered
 * (it ended) is rendered here. Outcomes come back in model order, each with its
 * recorded lookups and warnings, a failure as the same message chain
 * (recorded-render.ts): the caller logs and throws in project order.
 */
import { availableParallelism } from 'node:os';
import { envChoice, type EnvChoice } from '../env-choice.js';
import { BlockingThread, newWakeCounter, receiveAny } from '../threads/blocking-thread.js';
import { EngineError, rebuildError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ModelSource } from '../project/load.js';
import type { CompiledModel } from './compiled.js';
import { renderRecorded, type RenderOutcome } from './recorded-render.js';
import type { ChunkAnswer, RenderJob, WireOutcome } from './render-job.js';
import type { RenderEnv } from './render-model.js';
import { dirOf } from './macros.js';

/**
 * Fewest models to render for the parallel path. A worker costs ≈0.2–0.3 s of
 * CPU before its first render (thread, modules, its own JIT warm-up) and its
 * answers cost this thread their copy. Measured on 2 cores (the generated
 * bench project, cold compile, this thread's CPU time against a compile
 * without workers): 2,000 models −9 % and 4,000 models −9 %, each for
 * 20–40 % more CPU in all; 10,000 models −26 %.
 */
const PARALLEL_MIN_MODELS = 5000;
/** Models per chunk: large enough that a chunk's message is cheap next to its renders, small enough to share the tail. */
const CHUNK_MODELS = 50;
/** Most render workers (beside this thread). */
const MAX_WORKERS = 3;
/** A worker that answers no chunk for this long is taken for dead. */
const STALL_MS = 60_000;

/**
 * SERVICE_PARALLEL_RENDER: `auto` (default; the threshold above), `off` (never),
 * `always` (any number of models, and every thread renders its own share with
 * none taken from the workers: tests compare the paths with it).
 */
const PARALLEL_RENDER: EnvChoice<'auto' | 'off' | 'always'> = {
  name: 'SERVICE_PARALLEL_RENDER',
  values: { '': 'auto', auto: 'auto', off: 'off', always: 'always' },
  fallback: 'auto',
  expected: 'auto, off or always',
  instead: 'using auto',
};

type CompileModel = (env: RenderEnv, m: ModelSource) => CompiledModel;

/**
 * Render workers started before their work is known: a compile that expects
 * to render most of its models (no compile cache to take them from) starts
 * them once the walk has counted the model files, so their threads and
 * modules load while this thread reads the files. They wait for a job;
 * renderModels gives them one or stops them.
 */
export interface RenderWorkers {
  readonly threads: readonly BlockingThread[];
  /** Stops the workers (those that finished have stopped already). */
  stop(): void;
}

/** Workers for rendering `models` models, or undefined when this compile renders them all here (SERVICE_PARALLEL_RENDER, one core, too few). */
export function startRenderWorkers(models: number, logger: Logger): RenderWorkers | undefined {
  const count = workerCount(models, logger);
  if (count === 0) return undefined;
  const wake = newWakeCounter();
  // A worker that fails to start takes no chunk (this thread renders them all); say why at debug level.
  const onError = (err: Error) => logger.log('debug', `render worker: ${err.message}`);
  const threads = Array.from({ length: count }, (_, i) => new BlockingThread(import.meta.url, './render-worker.js', { name: `render-${i + 1}`, shareEnv: true, wake, onError }));
  return { threads, stop: () => threads.forEach((t) => t.stop()) };
}

function workerCount(models: number, logger?: Logger): number {
  const m = envChoice(PARALLEL_RENDER, logger);
  if (m === 'off' || models === 0 || (m === 'auto' && models < PARALLEL_MIN_MODELS)) return 0;
  return Math.max(0, Math.min(MAX_WORKERS, availableParallelism() - 1));
}

/** Every model's outcome, in model order; `workers`: started before (startRenderWorkers), used or stopped here. */
export function renderModels(env: RenderEnv, models: readonly ModelSource[], compileModel: CompileModel, logger: Logger, workers?: RenderWorkers): RenderOutcome[] {
  const pool = workerCount(models.length, logger) === 0 ? undefined : (workers ?? startRenderWorkers(models.length, logger));
  if (pool !== workers) workers?.stop();
  if (pool === undefined) return models.map((x) => renderRecorded(env, x, compileModel));
  try {
    return renderParallel(env, models, compileModel, pool.threads, envChoice(PARALLEL_RENDER, undefined) === 'always', logger);
  } finally {
    pool.stop();
  }
}

function renderParallel(env: RenderEnv, models: readonly ModelSource[], render: CompileModel, threads: readonly BlockingThread[], fixedShares: boolean, logger: Logger): RenderOutcome[] {
  const workers = threads.length;
  const size = Math.max(1, Math.min(CHUNK_MODELS, Math.floor(models.length / ((workers + 1) * 2))));
  const chunkCount = Math.ceil(models.length / size);
  const chunkOf = (id: number) => models.slice(id * size, Math.min(models.length, (id + 1) * size));
  // This thread's share: the first chunks; each worker's: an equal run of the rest.
  const own = Math.max(1, Math.floor(chunkCount / (workers + 1)));
  const perWorker = Math.ceil((chunkCount - own) / workers);
  const control = new Int32Array(new SharedArrayBuffer(chunkCount * 4));
  const posted: BlockingThread[] = [];
  for (let w = 0; w < workers; w++) {
    const first = own + w * perWorker;
    const last = Math.min(chunkCount, first + perWorker);
    if (first >= last) break;
    const chunks = [];
    for (let id = first; id < last; id++) chunks.push({ id, models: chunkOf(id) });
    posted.push(threads[w]!);
    post(threads[w]!, env, chunks, control.buffer as SharedArrayBuffer);
  }
  const outcomes: (RenderOutcome[] | undefined)[] = new Array(chunkCount);
  const renderChunk = (id: number) => (outcomes[id] = chunkOf(id).map((x) => renderRecorded(env, x, render)));
  let mine = 0;
  for (let id = 0; id < chunkCount; id++) {
    if (fixedShares && id >= own) break;
    if (Atomics.compareExchange(control, id, 0, 1) !== 0) break; // a worker has it, and every chunk after it in its share
    renderChunk(id);
    mine++;
  }
  // In fixed shares this thread took only its own: the workers take all of theirs, however late they start.
  const theirs = chunkCount - (fixedShares ? own : mine);
  const counts = new Map<number, number>();
  let received = 0;
  const waitStart = performance.now();
  while (received < theirs) {
    const r = receiveAny<ChunkAnswer>(posted, STALL_MS);
    if (r.kind === 'timed-out') throw new EngineError('internal', `render worker: no answer for ${STALL_MS / 1000} s (${received} of ${theirs} chunks in)`);
    if (r.kind === 'ended') {
      // Every worker ended with chunks it took unanswered: they are rendered here.
      logger.log('debug', `render workers ended with ${theirs - received} chunks unanswered; rendered on the main thread`);
      for (let id = 0; id < chunkCount; id++) if (outcomes[id] === undefined) renderChunk(id);
      break;
    }
    const a = r.answer;
    received++;
    counts.set(a.threadId, (counts.get(a.threadId) ?? 0) + chunkOf(a.id).length);
    if ('failure' in a) {
      logger.log('debug', `render worker ${a.threadId}: ${a.failure}; chunk ${a.id} rendered on the main thread`);
      renderChunk(a.id);
    } else {
      const chunk = chunkOf(a.id);
      outcomes[a.id] = a.outcomes.map((o, i) => fromWire(o, chunk[i]!, env));
    }
  }
  const waited = performance.now() - waitStart;
  logger.log('debug', `parallel render: ${models.length} models; this thread rendered ${models.length - [...counts.values()].reduce((a, b) => a + b, 0)}${[...counts].map(([id, n]) => `, worker thread ${id} ${n}`).join('')}; waited ${waited.toFixed(0)} ms for the workers`);
  return outcomes.flatMap((o) => o!);
}

/** A worker's job: what its renders read, and its share of the chunks. */
function post(worker: BlockingThread, env: RenderEnv, chunks: RenderJob['chunks'], control: SharedArrayBuffer): void {
  const prefixes: Record<string, string> = {};
  for (const c of chunks) for (const m of c.models) prefixes[dirOf(m.rel)] ??= env.macros.prefixFor(dirOf(m.rel));
  const job: RenderJob = { nodes: env.index.all, prefixes, vars: env.vars, target: env.target, ...(env.stepEnv ? { stepEnv: env.stepEnv } : {}), chunks, control };
  worker.post(job);
}

function fromWire(o: WireOutcome, m: ModelSource, env: RenderEnv): RenderOutcome {
  if ('error' in o) return { error: rebuildError(o.error), lookups: o.lookups, logs: o.logs, cacheable: o.cacheable };
  const model: CompiledModel = {
    kind: 'model',
    name: m.name,
    source: m,
    config: o.config ?? m.config,
    tests: m.tests,
    sql: o.sql,
    pre: o.pre,
    post: o.post,
    dependencies: o.dependencies,
    template: o.template,
    templatePrefix: env.macros.prefixFor(dirOf(m.rel)),
  };
  return { model, lookups: o.lookups, logs: o.logs, cacheable: o.cacheable };
}
