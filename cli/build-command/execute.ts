/**
 * `run` and `test` on one prepared project: the host-neutral execution of
 * actors/build-run/execute-build.ts plus what only the CLI does — progress lines from
 * the actor's events and SIGINT / SIGTERM handling (cancel in the database,
 * exit 130 / 143) — returning the result records in DAG order.
 */
import type { TestResult } from '../../engine/build-plan/node-task.js';
import type { BuildActor, ModelHooks } from '../../actors/build-run/start-build.js';
import type { TargetAhead } from '../../actors/build-run/target-ahead.js';
import { executeBuild, newRunId, nodeKind } from '../../actors/build-run/execute-build.js';
import type { PreparedBuild } from '../../engine/build-plan/prepare.js';
import type { Level, Logger } from '../../engine/log.js';
import type { BuildArgs } from './args.js';
import { builtButTestFailedLine, progressLine, formatDuration, rowsNote, type ResultRecord } from './render-run.js';

export { newRunId };

/**
 * Model hooks run pipeline steps: the pipeline engine is imported when the
 * first hook runs, so the (usual) build without hooks does not load it.
 */
function modelHooks(p: PreparedBuild, logger: Logger): ModelHooks {
  let hooks: Promise<ModelHooks> | undefined;
  return async (phase, task, signal) => {
    hooks ??= import('../../actors/pipeline-services.js').then((m) => m.localModelHooks(p, logger));
    return (await hooks)(phase, task, signal);
  };
}

export interface ExecutionResult {
  readonly records: readonly ResultRecord[];
  readonly durationMs: number;
  readonly tests: readonly TestResult[];
  /** 130 (SIGINT) or 143 (SIGTERM) when the run was interrupted. */
  readonly signalExit?: number;
}

export async function executePrepared(args: BuildArgs, verb: 'run' | 'test', p: PreparedBuild, logger: Logger, ahead?: TargetAhead): Promise<ExecutionResult> {
  const level: Level = args.trace ? 'trace' : args.debug ? 'debug' : 'info';
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
    const result = await executeBuild(p, {
      verb,
      ...(args.freshness ? { freshness: true } : {}),
      fullRefresh: args.fullRefresh,
      noSeeds: args.noSeeds,
      threads: args.threads,
      failFast: args.failFast,
      range: args.range,
      logger,
      logLevel: level,
      state: process.env.SERVICE_STATE || undefined,
      hooks: modelHooks(p, logger),
      artifacts: { args: { which: verb, target: args.target ?? p.targetName, select: args.select, exclude: args.exclude, full_refresh: args.fullRefresh, threads: args.threads, vars: args.vars ?? {} } },
      ...(ahead ? { ahead } : {}),
      beforeStart: ({ actor, threads, failedOutcome }) => {
        actorRef = actor;
        if (threads === 1 && args.threads > 1 && p.connection?.type === 'duckdb') {
          logger.log('info', `target '${p.targetName}' is single-writer (duckdb): threads capped from ${args.threads} to 1`);
        }
        if (!args.json) {
          actor.events.on('node.start', (e) => logger.log('info', progressLine(e.index, e.total, e.node.table, nodeKind(e.node), 'START')));
          actor.events.on('node.finish', (e) => {
            const word =
              e.status === 'skipped'
                ? 'SKIP'
                : e.status === 'error'
                  ? `FAIL (${formatDuration(e.durationMs)})${rowsNote(nodeKind(e.node), e.result?.rows)}`
                  : `${e.result && e.result.warnings.length > 0 ? 'WARN' : 'OK'} (${formatDuration(e.durationMs)})${rowsNote(nodeKind(e.node), e.result?.rows)}`;
            logger.log(e.status === 'error' ? 'error' : 'info', progressLine(e.index, e.total, e.node.table, nodeKind(e.node), word));
            const failed = e.status === 'error' && e.node.kind === 'model' ? failedOutcome(e.id) : undefined;
            const built = failed?.tests && e.node.kind === 'model' ? builtButTestFailedLine(e.node.table, nodeKind(e.node), failed.rows, failed.tests, e.node.tests.length) : undefined;
            if (built !== undefined) logger.log('error', built);
          });
        }
        actor.events.on('run.cancelling', (e) => logger.log('info', `interrupted: cancelling ${e.running} running node(s)`));
        // Interrupted while connecting or creating schemas: the run starts cancelled and skips every node.
        if (signalExit !== undefined) actor.cancel();
      },
    });
    return { ...result, ...(signalExit !== undefined ? { signalExit } : {}) };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
