/**
 * What each command of the table does: its name mapped to a handler that
 * loads the command's module when it runs (loading all of them — Koa, git,
 * the DuckDB addon, the replication engine… — cost about half a second
 * before any command could start). A handler gets the parsed command line;
 * a usage error it throws is printed with the command's help hint (exit 2).
 */
import type { BuildCommand } from './build-command/args.js';
import type { Io } from './io.js';
import { flagSet, flagValue, type ParsedArgs } from './parse-command-line.js';

type Handler = (a: ParsedArgs, io: Io) => Promise<number>;

const build = (command: BuildCommand): Handler => async (a, io) => {
  const { buildArgs } = await import('./build-command/args.js');
  const args = buildArgs(command, a);
  const { buildCommand } = await import('./build-command/command.js');
  return buildCommand(args, io);
};

const remote = (key: string): Handler => async (a, io) => (await import('./remote.js')).remoteCommand(key, a, io);

/** `conns` asks the daemon with `--remote` or when SERVICE_PLATFORM_HOST is set. */
const viaDaemon = (a: ParsedArgs) => flagSet(a, 'remote') || (process.env.SERVICE_PLATFORM_HOST ?? '') !== '';

export const HANDLERS: Readonly<Record<string, Handler>> = {
  init: async (a, io) => (await import('./init.js')).initCommand(a, io),
  'build run': build('run'),
  'build list': build('list'),
  'build test': build('test'),
  'build compile': build('compile'),
  'build graph': async (a, io) => (await import('./build-command/graph-command.js')).graphCommand(a, io),
  run: async (a, io) => (await import('./run-file.js')).runFileCommand(a, io),
  serve: async (a, io) => (await import('./serve.js')).serveCommand(a, io),
  'conns list': async (a, io) => (viaDaemon(a) ? remote('conns list')(a, io) : (await import('./conns.js')).connsList(io, flagValue(a, 'output') === 'json')),
  'conns test': async (a, io) => (viaDaemon(a) ? remote('conns test')(a, io) : (await import('./conns.js')).connsTest(a.positionals[0]!, io)),
  'project create': async (a, io) => (await import('./operator.js')).projectCommand('create', a, io),
  'project update': async (a, io) => (await import('./operator.js')).projectCommand('update', a, io),
  'project list': async (a, io) => (await import('./operator.js')).projectCommand('list', a, io),
  'project delete': async (a, io) => (await import('./operator.js')).projectDelete(a, io),
  'token create': async (a, io) => (await import('./operator.js')).tokenCommand(a, io),
  'token list': async (a, io) => (await import('./operator.js')).tokenList(a, io),
  'token revoke': async (a, io) => (await import('./operator.js')).tokenRevoke(a, io),
  'cluster status': async (a, io) => (await import('./cluster.js')).clusterStatus(a, io),
  'cluster token': async (a, io) => (await import('./cluster.js')).clusterToken(a, io),
  'jobs list': remote('jobs list'),
  'jobs get': remote('jobs get'),
  'jobs run': remote('jobs run'),
  'jobs save': remote('jobs save'),
  'jobs activate': remote('jobs activate'),
  'jobs deactivate': remote('jobs deactivate'),
  'execs list': remote('execs list'),
  'execs get': remote('execs get'),
  'execs log': remote('execs log'),
  'execs cancel': remote('execs cancel'),
  'files list': remote('files list'),
  'files get': remote('files get'),
  'files save': remote('files save'),
  'files delete': remote('files delete'),
  'files rename': remote('files rename'),
  'git pull': remote('git pull'),
  'bench dag': async (a, io) => (await import('./bench.js')).benchCommand(a, io),
};
