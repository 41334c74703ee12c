/**
 * The Renderer (renderer.ts) itself: the model pipeline and the nunjucks
 * engine. Importing this module loads the templating and SQL modules.
 */
import { createNunjucksEngine } from '../template/nunjucks-engine.js';
import { compileModel } from './compile-model.js';
import type { Renderer } from './renderer.js';

export const modelRenderer: Renderer = { compileModel, createEngine: createNunjucksEngine };
