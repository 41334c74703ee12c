/**
 * What compiling needs only to render a model: the templating engine and the
 * model pipeline (engine/compile/model-renderer.ts) and its render workers
 * — about 30 modules (templating, SQL scanning, threads) that a compile taking every model from the
 * compile cache never loads. compileProject asks for it the first time a
 * model must be rendered; the caller decides how it is loaded (a static
 * import, or `lazyModule` on the command line).
 */
import type { Logger } from '../log.js';
import type { ModelSource } from '../project/load.js';
import type { TemplateEngine } from '../template/template-engine.js';
import type { CompiledModel } from './compiled.js';
import type { RenderWorkers } from './parallel-render.js';
import type { RenderOutcome } from './recorded-render.js';
import type { RenderEnv } from './render-model.js';

export interface Renderer {
  compileModel(env: RenderEnv, m: ModelSource): CompiledModel;
  createEngine(): TemplateEngine;
  /** Every model rendered, on render workers too when there are many (parallel-render.ts). */
  renderModels(env: RenderEnv, models: readonly ModelSource[], logger: Logger, workers?: RenderWorkers): RenderOutcome[];
  /** Render workers started ahead of a compile expected to render `models` models; undefined when it would render them here. */
  startRenderWorkers(models: number, logger: Logger): RenderWorkers | undefined;
}

/** An engine that asks `renderer()` for the real one on its first render. */
export function lazyEngine(renderer: () => Renderer): TemplateEngine {
  let engine: TemplateEngine | undefined;
  return {
    render: (...args) => (engine ??= renderer().createEngine()).render(...args),
  };
}
