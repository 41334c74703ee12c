/**
 * `run` and `test` on one prepared project: plans the node tasks, starts the
 * build actor, renders progress lines from its events, handles SIGINT /
 * SIGTERM (cancel in the database, exit 130 / 143), and returns the result
 * records in DAG order (build.md §13, §15).
 */
import { randomInt } from 'node:crypto';
import { startBuild, type BuildActor, type BuildNode } from '../../actors/build-run.js';
import type { PreparedBuild } from '../../engine/build/prepare.js';
import { planTasks } from '../../engine/build/plan-tasks.js';
import type { NodeTask } from '../../engine/build/node-task.js';
import type { Level, Logger } from '../../engine/log.js';
import type { SchemaRef } from '../../engine/targets/index.js';
import type { BuildArgs } from './args.js';
import { progressLine, seconds, formatDuration, type ResultRecord } from './render-run.js';

export interface ExecutionResult {
  readonly records: readonly ResultRecord[];
  readonly durationMs: number;
  /** 130 (SIGINT) or 143 (SIGTERM) when the run was interrupted. */
  readonly signalExit?: number;
}

export function newRunId(): string {
  let id = '';
  for (let i = 0; i < 6; i++) id += String.fromCharCode(97 + randomInt(26));
  return id;
}

const kindOf = (t: NodeTask) => (t.kind === 'seed' ? 'seed' : t.kind === 'test' ? 'test' : t.mode);

export async function executePrepared(args: BuildArgs, verb: 'run' | 'test', p: PreparedBuild, logger: Logger): Promise<ExecutionResult> {
  const tasks = planTasks(p.compiled, p.selected, verb, args.fullRefresh);
  const skipSeeds = verb === 'test' || args.noSeeds;
  const nodes: BuildNode[] = tasks.map((task, i) => ({
    id: task.name.toLowerCase(),
    deps: p.selected[i]!.dependencies.map((d) => d.toLowerCase()),
    task,
    presetSkip: task.kind === 'seed' && skipSeeds,
  }));
  const schemas = new Map<string, SchemaRef>();
  if (verb === 'run') {
    for (const n of nodes) {
      if (n.presetSkip) continue;
      const r = n.task.relation;
      schemas.set(`${r.database ?? ''}.${r.schema}`, r.database ? { database: r.database, schema: r.schema } : { schema: r.schema });
    }
  }
  const level: Level = args.trace ? 'trace' : args.debug ? 'debug' : 'info';
  const started = performance.now();
  let signalExit: number | undefined;
  let actorRef: BuildActor | undefined;
  // Listening before the first dispatch: a signal that arrives between a START line and a later
  // registration would otherwise hit Node's default action and kill the process mid-query.
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalExit !== undefined) process.exit(signalExit); // a second signal exits at once
    signalExit = sig === 'SIGTERM' ? 143 : 130;
    actorRef?.cancel();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const handle = await startBuild(
      {
        nodes,
        connection: p.connection!,
        settings: { runId: newRunId(), targetName: p.targetName, fullRefresh: args.fullRefresh, range: args.range, state: process.env.SERVICE_STATE || undefined },
        threads: Math.min(args.threads, Math.max(1, nodes.length)),
        failFast: args.failFast,
        schemas: [...schemas.values()],
        logger,
        logLevel: level,
      },
      ({ actor, threads }) => {
        actorRef = actor;
        if (threads === 1 && args.threads > 1 && p.connection?.type === 'duckdb') {
          logger.log('info', `target '${p.targetName}' is single-writer (duckdb): threads capped from ${args.threads} to 1`);
        }
        if (!args.json) {
          actor.events.on('node.start', (e) => logger.log('info', progressLine(e.index, e.total, e.node.table, kindOf(e.node), 'START')));
          actor.events.on('node.finish', (e) => {
            const word =
              e.status === 'skipped' ? 'SKIP' : e.status === 'error' ? `FAIL (${formatDuration(e.durationMs)})` : `${e.result && e.result.warnings.length > 0 ? 'WARN' : 'OK'} (${formatDuration(e.durationMs)})`;
            logger.log(e.status === 'error' ? 'error' : 'info', progressLine(e.index, e.total, e.node.table, kindOf(e.node), word));
          });
        }
        actor.events.on('run.cancelling', (e) => logger.log('info', `interrupted: cancelling ${e.running} running node(s)`));
        // Interrupted while connecting or creating schemas: the run starts cancelled and skips every node.
        if (signalExit !== undefined) actor.cancel();
      },
    );
    const result = await handle.finished;
    const records: ResultRecord[] = result.records.map((r) => {
      const t = r.node;
      const outcome = r.result;
      const warnings = outcome?.warnings ?? [];
      return {
        name: t.table,
        type: t.kind,
        mode: t.kind === 'seed' ? 'full-refresh' : t.kind === 'test' ? 'test' : t.mode,
        duration: r.status === 'skipped' ? 0 : seconds(r.durationMs),
        status: r.status === 'success' ? 'success' : r.status === 'error' ? 'error' : 'skipped',
        error: r.status === 'error' ? (r.error?.message ?? 'unknown error') : r.status === 'success' ? warnings.join('; ') : '',
        rows: outcome?.rows ?? 0,
        bytes: outcome?.bytes ?? 0,
      };
    });
    return { records, durationMs: performance.now() - started, ...(signalExit !== undefined ? { signalExit } : {}) };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
