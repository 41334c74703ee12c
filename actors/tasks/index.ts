/**
 * The handler table: task `type` → handler. The worker entry dispatches on
 * it, and the pool derives its typed `run()` signature from it. To add a task
 * kind, write `actors/tasks/<kind>.ts` exporting its task type, result type
 * and handler, and add one entry here.
 */
import { buildNode } from './build-node.js';
import { ping } from './ping.js';
import { queryRun } from './query-run.js';
import { replicationStream } from './replication-stream.js';
import { sleep } from './sleep.js';
import type { PoolTask, TaskHandler } from './task-handler.js';

export const taskHandlers = {
  'build.node': buildNode,
  'query.run': queryRun,
  'replication.stream': replicationStream,
  ping,
  sleep,
} satisfies Record<string, TaskHandler<any, unknown>>;

type Handlers = typeof taskHandlers;

export type TaskType = keyof Handlers;
/** Every task the pool can run, as a union discriminated by `type`. */
export type Task = { [K in TaskType]: Parameters<Handlers[K]>[0] }[TaskType];
/** The result a task of this shape resolves to. */
export type TaskResult<T extends PoolTask> = T['type'] extends TaskType ? Awaited<ReturnType<Handlers[T['type']]>> : unknown;

export function handlerFor(type: string): TaskHandler<PoolTask, unknown> | undefined {
  return Object.hasOwn(taskHandlers, type) ? (taskHandlers[type as TaskType] as TaskHandler<PoolTask, unknown>) : undefined;
}

export const taskTypes = (): string[] => Object.keys(taskHandlers).sort();

export type { PoolTask, TaskContext, TaskHandler } from './task-handler.js';
