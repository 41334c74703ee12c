/**
 * `ping`: answers with the id of the thread it ran on. Health checks use it
 * to prove the pool is up, tests to prove tasks leave the main thread.
 */
import { threadId } from 'node:worker_threads';
import type { TaskHandler } from './task-handler.js';

export interface PingTask {
  readonly type: 'ping';
}

export interface PingResult {
  readonly threadId: number;
}

export const ping: TaskHandler<PingTask, PingResult> = async () => ({ threadId });
