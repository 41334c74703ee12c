/**
 * `service build <command>`: the entry. It prints help for a bare `run`
 * outside a project, starts connecting a PostgreSQL run's target,
 * then loads the build stages (stages.ts) and runs them. Returns the exit
 * code.
 *
 * The connections open before the stages' modules load: the target
 * connection is read from the config file alone (peek-target.ts), so the
 * handshakes happen while this thread loads modules and compiles the
 * project instead of before the first node.
 */
import type { TargetAhead } from '../../actors/build-run/target-ahead.js';
import { peekTargetConnection } from '../../engine/build-plan/peek-target.js';
import { findConfigFiles } from '../../engine/project/config.js';
import { isDbtProject } from '../../engine/project/dbt/dbt-project-file.js';
import { resolveBuildPath } from '../../engine/project/load.js';
import { cliLogger } from '../cli-logger.js';
import { printFatal, type Io } from '../io.js';
import type { BuildArgs, BuildCommand } from './args.js';
import { commandHelp } from './help.js';

export async function buildCommand(args: BuildArgs, io: Io): Promise<number> {
  const command = args.command;
  // Guard: `run` with no config, no --target and no -R prints help without walking the tree —
  // but a path that does not exist is an error, and the help comes with the reason nothing ran.
  if (command === 'run' && args.target === undefined && !args.recursive) {
    let abs: string;
    try {
      abs = resolveBuildPath(args.path);
    } catch (err) {
      return printFatal(err, io, undefined, `build ${command}`);
    }
    if (findConfigFiles(abs).length === 0 && !isDbtProject(abs)) {
      io.err(`nothing to run: ${abs} has no service_build.yml and no --target was given\n`);
      (args.json ? io.err : io.out)(commandHelp('run'));
      return 0;
    }
  }
  const logger = cliLogger(args, io.err);
  for (const note of args.notes ?? []) logger.log('warn', note);
  let ahead: TargetAhead | undefined;
  try {
    ahead = await targetAhead(args, command);
    const { runBuild } = await import('./stages.js');
    return await runBuild(args, command, logger, io, ahead);
  } catch (err) {
    return printFatal(err, io, undefined, `build ${command}`);
  } finally {
    await ahead?.close().catch(() => {});
  }
}

/** The target of a single-project PostgreSQL `run`/`test`, connecting; undefined otherwise (the run opens its own). */
async function targetAhead(args: BuildArgs, command: BuildCommand): Promise<TargetAhead | undefined> {
  if ((command !== 'run' && command !== 'test') || args.recursive) return undefined;
  const connection = peekTargetConnection(args.path, { target: args.target, schema: args.schema, prod: args.prod, vars: args.vars });
  if (connection?.type !== 'postgres') return undefined;
  const { openTargetAhead } = await import('../../actors/build-run/target-ahead.js');
  return openTargetAhead(connection, Math.max(1, args.threads));
}
