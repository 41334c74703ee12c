/**
 * A render worker's thread (parallel-render.ts): once its job arrives, takes its chunks from the
 * last to the first — the main thread works from the front and takes what
 * is left — renders each model as the main thread would (renderRecorded,
 * the same model pipeline and engine), and answers each chunk to the
 * waiting main thread (a BlockingThread: engine/threads/blocking-thread.ts).
 */
import { threadId } from 'node:worker_threads';
import type { ThreadSide } from '../threads/blocking-thread.js';
import { errorChain, serializeError } from '../errors.js';
import { createNunjucksEngine } from '../template/nunjucks-engine.js';
import { compileModel } from './compile-model.js';
import { NodeIndex } from './node-index.js';
import { renderRecorded } from './recorded-render.js';
import type { RenderEnv } from './render-model.js';
import type { ModelSource } from '../project/load.js';
import type { ChunkAnswer, RenderJob, WireOutcome } from './render-job.js';

// The job comes as one request (parallel-render.ts `post`); the thread may have started well before it.
export default function renderThread(side: ThreadSide<undefined>): void {
  side.onRequest((job) => run(job as RenderJob, side));
}

function run(job: RenderJob, side: ThreadSide<undefined>): void {
  const control = new Int32Array(job.control);
  const env: RenderEnv = {
    engine: createNunjucksEngine(),
    index: new NodeIndex(job.nodes),
    macros: { prefixFor: (dir) => job.prefixes[dir] ?? '' },
    vars: job.vars,
    target: job.target,
    // renderRecorded keeps the warnings for the main thread to log.
    logger: { log: () => {}, enabled: () => true },
    ...(job.stepEnv ? { stepEnv: job.stepEnv } : {}),
  };
  for (let i = job.chunks.length - 1; i >= 0; i--) {
    const chunk = job.chunks[i]!;
    if (Atomics.compareExchange(control, chunk.id, 0, 1) !== 0) break; // the main thread got here first: it takes the rest
    let answer: ChunkAnswer;
    try {
      answer = { id: chunk.id, threadId, outcomes: chunk.models.map((m) => render(env, m)) };
    } catch (err) {
      answer = { id: chunk.id, threadId, failure: errorChain(err) };
    }
    side.answer(answer);
  }
}

function render(env: RenderEnv, m: ModelSource): WireOutcome {
  const o = renderRecorded(env, m, compileModel);
  if (o.model === undefined) return { error: serializeError(o.error), lookups: o.lookups, logs: o.logs, cacheable: o.cacheable };
  const c = o.model;
  return { sql: c.sql, pre: c.pre, post: c.post, config: c.config === m.config ? null : c.config, dependencies: c.dependencies, template: c.template, lookups: o.lookups, logs: o.logs, cacheable: o.cacheable };
}
