/**
 * The handler table: task `type` → handler. The worker entry dispatches on
 * it, and the pool derives its typed `run()` signature from it. To add a task
 * kind, write `actors/pool-tasks/<kind>.ts` exporting its task type, result type
 * and handler, and add one entry here.
 *
 * Handlers are imported the first time a worker runs a task of their type:
 * a worker that only builds PostgreSQL models never loads the replication
 * engine or the DuckDB addon, and every worker of a run boots in a fraction
 * of the time (module loading was most of a worker's start-up).
 */
import { importNear } from '../../engine/lazy-import.js';
import type { PoolTask, TaskHandler } from './task-handler.js';

const near = <M>(specifier: string) => importNear<M>(import.meta.url, specifier);

const loaders = {
  'build.node': async () => (await near<typeof import('./build-node.js')>('./build-node.js')).buildNode,
  'build.prepare': async () => (await near<typeof import('./build-prepare.js')>('./build-prepare.js')).buildPrepare,
  'build.setup': async () => (await near<typeof import('./build-node.js')>('./build-node.js')).buildSetup,
  'query.run': async () => (await near<typeof import('./query-run.js')>('./query-run.js')).queryRun,
  'replication.stream': async () => (await near<typeof import('./replication-stream.js')>('./replication-stream.js')).replicationStream,
  'bench.task': async () => (await near<typeof import('../bench/bench-task.js')>('../bench/bench-task.js')).benchTask,
  'jobfile.validate': async () => (await near<typeof import('./validate-job-file.js')>('./validate-job-file.js')).validateJobFileTask,
  'lineage.view': async () => (await near<typeof import('./lineage-view.js')>('./lineage-view.js')).lineageViewTask,
  'duckdb.open': async () => (await near<typeof import('./duckdb-file.js')>('./duckdb-file.js')).duckdbOpen,
  'duckdb.close': async () => (await near<typeof import('./duckdb-file.js')>('./duckdb-file.js')).duckdbClose,
  'duckdb.session': async () => (await near<typeof import('./duckdb-file.js')>('./duckdb-file.js')).duckdbSession,
  'duckdb.tables': async () => (await near<typeof import('./duckdb-file.js')>('./duckdb-file.js')).duckdbTables,
  'duckdb.sql': async () => (await near<typeof import('./duckdb-file.js')>('./duckdb-file.js')).duckdbSql,
  ping: async () => (await near<typeof import('./ping.js')>('./ping.js')).ping,
  sleep: async () => (await near<typeof import('./sleep.js')>('./sleep.js')).sleep,
} satisfies Record<string, () => Promise<TaskHandler<any, unknown>>>;

type Handlers = { [K in keyof typeof loaders]: Awaited<ReturnType<(typeof loaders)[K]>> };

export type TaskType = keyof Handlers;
/** Every task the pool can run, as a union discriminated by `type`. */
export type Task = { [K in TaskType]: Parameters<Handlers[K]>[0] }[TaskType];
/** The result a task of this shape resolves to. */
export type TaskResult<T extends PoolTask> = T['type'] extends TaskType ? Awaited<ReturnType<Handlers[T['type']]>> : unknown;

const loaded = new Map<string, Promise<TaskHandler<PoolTask, unknown>>>();

/** The handler of `type` (loaded on first use, once); undefined for an unknown type. */
export async function handlerFor(type: string): Promise<TaskHandler<PoolTask, unknown> | undefined> {
  if (!Object.hasOwn(loaders, type)) return undefined;
  let handler = loaded.get(type);
  if (!handler) {
    handler = loaders[type as TaskType]() as Promise<TaskHandler<PoolTask, unknown>>;
    loaded.set(type, handler);
    handler.catch(() => loaded.delete(type)); // a failed load is tried again by the next task
  }
  return handler;
}

export const taskTypes = (): string[] => Object.keys(loaders).sort();

export type { PoolTask, TaskContext, TaskHandler } from './task-handler.js';
