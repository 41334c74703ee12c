/**
 * The Renderer (renderer.ts) itself: the model pipeline, the nunjucks
 * engine and the render workers. Importing this module loads the templating and SQL modules.
 */
import { createNunjucksEngine } from '../template/nunjucks-engine.js';
import { compileModel } from './compile-model.js';
import { renderModels, startRenderWorkers } from './parallel-render.js';
import type { Renderer } from './renderer.js';

export const modelRenderer: Renderer = {
  compileModel,
  createEngine: createNunjucksEngine,
  renderModels: (env, models, logger, workers) => renderModels(env, models, compileModel, logger, workers),
  startRenderWorkers,
};
