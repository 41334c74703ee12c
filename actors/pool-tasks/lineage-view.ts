/**
 * Pool task `lineage.view`: a build project's lineage for the web console —
 * compile, dagre layout and SVG — on a worker thread, so a large project's
 * page never holds the daemon's event loop.
 */
import { lineageView, type LineageView, type LineageViewRequest } from '../../engine/lineage/lineage-view.js';
import type { TaskHandler } from './task-handler.js';

export interface LineageViewTask extends LineageViewRequest {
  readonly type: 'lineage.view';
}

export const lineageViewTask: TaskHandler<LineageViewTask, LineageView> = async (task) => lineageView(task);
