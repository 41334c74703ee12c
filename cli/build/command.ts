/**
 * `service build <command>`: turns the parsed arguments into a build request,
 * runs the stages, and renders the result on stdout (payload) and stderr
 * (logs). Returns the exit code (build.md §14.4).
 */
import { planProjects, prepareBuild, type BuildRequest, type PreparedBuild } from '../../engine/build/prepare.js';
import { findConfigFiles } from '../../engine/project/config.js';
import type { Logger } from '../../engine/log.js';
import { resolve } from 'node:path';
import { cliLogger } from '../cli-logger.js';
import type { BuildArgs, BuildCommand } from './args.js';
import { commandHelp } from './help.js';
import { compileJson, compileText } from './render-compile.js';
import { listEntries, listText } from './render-list.js';
import { printFatal, type Io } from '../io.js';

export function toRequest(args: BuildArgs, command: BuildCommand, path = args.path): BuildRequest {
  return {
    verb: command,
    path,
    target: args.target,
    select: args.select,
    exclude: args.exclude,
    schema: args.schema,
    prod: args.prod,
    vars: args.vars,
    recursive: args.recursive,
    fullRefresh: args.fullRefresh,
  };
}

export async function buildCommand(args: BuildArgs, io: Io): Promise<number> {
  const command = args.command!;
  // §2.1 guard: `run` with no config, no --target and no -R prints help without walking the tree.
  if (command === 'run' && args.target === undefined && !args.recursive && findConfigFiles(resolve(args.path)).length === 0) {
    (args.json ? io.err : io.out)(commandHelp('run'));
    return 0;
  }
  const logger = cliLogger(args, io.err);
  try {
    const plan = planProjects(args);
    if (plan.mode === 'independent') return await independent(args, command, plan.root, plan.children, logger, io);
    const prepared = prepareBuild(toRequest(args, command), logger);
    return await single(args, command, prepared, logger, io);
  } catch (err) {
    return printFatal(err, io);
  }
}

async function single(args: BuildArgs, command: BuildCommand, p: PreparedBuild, _logger: Logger, io: Io): Promise<number> {
  switch (command) {
    case 'list': {
      const entries = listEntries(p.selected, p.targetName !== '', args.fullRefresh);
      if (args.json) io.out(JSON.stringify(entries) + '\n');
      else io.out(entries.length === 0 ? 'No models selected.\n' : listText(entries));
      return 0;
    }
    case 'compile':
      if (args.json) io.out(JSON.stringify(compileJson(p.selected, p.targetName, args.fullRefresh)) + '\n');
      else io.out(compileText(p.selected, args.fullRefresh));
      return 0;
    default:
      throw new Error(`service build ${command} is not implemented yet`);
  }
}

/** §17 independent mode: each child project prepared and rendered on its own. */
async function independent(args: BuildArgs, command: BuildCommand, root: string, children: readonly string[], logger: Logger, io: Io): Promise<number> {
  const results: { dir: string; path: string; prepared?: PreparedBuild; error?: unknown }[] = [];
  for (const dir of children) {
    const path = resolve(root, dir);
    try {
      results.push({ dir, path, prepared: prepareBuild({ ...toRequest(args, command, path), recursive: false }, logger) });
    } catch (err) {
      results.push({ dir, path, error: err });
    }
  }
  const failed = results.filter((r) => r.error !== undefined);
  if (command === 'list' || command === 'compile') {
    if (failed.length > 0) return printFatal(failed.map((r) => r.error), io, failed.map((r) => `could not compile sub-project ${r.dir}`));
    const ok = results.map((r) => r.prepared!);
    if (args.json) {
      const payload = ok.map((p) =>
        command === 'list'
          ? { path: p.root, target: p.targetName, nodes: listEntries(p.selected, p.targetName !== '', args.fullRefresh) }
          : { path: p.root, target: p.targetName, ...compileJson(p.selected, p.targetName, args.fullRefresh) },
      );
      io.out(JSON.stringify(payload) + '\n');
    } else {
      for (const [i, p] of ok.entries()) {
        const header = `=== Sub-project: ${results[i]!.dir} (target: ${p.targetName}) ===`;
        if (command === 'list') io.out(`${header}\n${listText(listEntries(p.selected, p.targetName !== '', args.fullRefresh)) || 'No models selected.\n'}\n`);
        else io.out(`# ${header}\n${compileText(p.selected, args.fullRefresh)}\n`);
      }
    }
    return 0;
  }
  throw new Error(`service build ${command} -R is not implemented yet`);
}
