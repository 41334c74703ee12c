/**
 * The `service` program. Command groups are message producers over the
 * engine (DESIGN.md): `service build …` parses its arguments strictly (exact
 * usage errors, exit 2) and runs the build stages. sade holds the program's
 * command table and renders the top-level help.
 */
import sade from 'sade';
import { EngineError } from '../engine/errors.js';
import { parseBuildArgs } from './build/args.js';
import { buildHelp, commandHelp } from './build/help.js';
import { VERSION } from './version.js';
import { printUsageError, processIo, type Io } from './io.js';

// Each command group's module is imported when that command runs: loading
// all of them (Koa, git, the DuckDB addon, the replication engine…) cost
// about half a second before any command could start.


function program() {
  const prog = sade('service').version(VERSION);
  prog.command('init [dir]', 'Create a runnable build project (models/ with config, a DuckDB connection, a seed, two models with tests)').example('init my-project');
  prog.command('build <command> [path]', 'Compile and run SQL models: run, list, test, compile').example('build run examples/shop');
  prog.command('conns list', 'List the connections this machine knows (name, type, kind, source)').option('-o', 'output: table or json', 'table');
  prog.command('conns test <name>', 'Connect with a 10 s timeout and run select 1 (--remote or SERVICE_PLATFORM_HOST: ask the daemon)');
  prog.command('run <file>', 'Run a job file (replication, pipeline, monitor, query) locally, without a daemon').option('--json', 'print the execution and its tasks or steps as JSON').option('--var', 'K=V run variable (repeatable)').option('--allow-command-steps', 'let pipeline command steps run');
  prog.command('serve', 'Run the daemon: HTTP API, scheduler and executions').option('--port', 'TCP port', 8080).option('--host', 'bind address', '127.0.0.1').option('--data-dir', 'data directory').option('--state', 'SQLite path or postgres URL').option('--max-running', 'executions at once', 4).option('--grace-period', 'shutdown wait', '60s');
  prog.command('project <create|update|list> [name]', 'Operator: manage projects in the state store');
  prog.command('token create', 'Operator: print a new project token once (--project NAME)');
  prog.command('cluster <status|token>', 'Operator, cluster mode: list the daemons sharing the PostgreSQL state store (--json), or print a new operator token for GET /cluster');
  prog.command('jobs <list|get|run> [id]', 'API client: jobs of the token\'s project');
  prog.command('execs <list|get|log|cancel> [id]', 'API client: executions');
  prog.command('files <list|get|save> [name]', 'API client: project files');
  prog.command('bench dag', 'Benchmark DAG throughput: synthetic shapes through the supervisor and worker pool').example('bench dag --shape diamond --nodes 64 --task sleep:50 --threads 4');
  prog.command('git pull', 'API client: sync the project tree from its git branch now');
  return prog;
}

const HELPED_GROUPS = new Set(['serve', 'project', 'token', 'jobs', 'execs', 'files', 'git', 'conns']);

export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [group, ...rest] = argv;
  if (group !== undefined && HELPED_GROUPS.has(group)) {
    const help = (await import('./command-help.js')).commandHelpFor(group, rest);
    if (help !== undefined) {
      io.out(help);
      return 0;
    }
  }
  if (group === 'build') {
    let args;
    try {
      args = parseBuildArgs(rest);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'usage') {
        const cmd = rest[0] && !rest[0].startsWith('-') && ['run', 'list', 'test', 'compile'].includes(rest[0]) ? rest[0] : undefined;
        return printUsageError(err.message, cmd, io);
      }
      throw err;
    }
    if (args.command === undefined) {
      io.out(buildHelp());
      return 0;
    }
    if (args.help) {
      io.out(commandHelp(args.command));
      return 0;
    }
    const { buildCommand } = await import('./build/command.js');
    return buildCommand(args, io);
  }
  if (group === 'jobs' || group === 'execs' || group === 'files' || group === 'git' || (group === 'conns' && (rest.includes('--remote') || (process.env.SERVICE_PLATFORM_HOST ?? '') !== ''))) {
    const { remoteCommand } = await import('./remote.js');
    return remoteCommand(group, rest.filter((a) => a !== '--remote'), io);
  }
  if (group === 'serve') {
    const { serveCommand } = await import('./serve.js');
    try {
      return await serveCommand(rest, io);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'usage') {
        io.err(`error: ${err.message}\nRun 'service --help' for usage.\n`);
        return 2;
      }
      throw err;
    }
  }
  if (group === 'init') return (await import('./init.js')).initCommand(rest, io);
  if (group === 'bench') return (await import('./bench.js')).benchCommand(rest, io);
  if (group === 'run') return (await import('./run-file.js')).runFileCommand(rest, io);
  if (group === 'project') return (await import('./operator.js')).projectCommand(rest, io);
  if (group === 'token') return (await import('./operator.js')).tokenCommand(rest, io);
  if (group === 'cluster') return (await import('./cluster.js')).clusterCommand(rest, io);
  if (group === 'conns') {
    const { connsList, connsTest } = await import('./conns.js');
    const [sub, ...more] = rest;
    if (sub === 'list') return connsList(io, more.includes('json') || more.includes('-o=json') || more.includes('--json'));
    if (sub === 'test') return connsTest(more[0], io);
    io.err(`error: unknown conns command "${sub ?? ''}", expected list or test\nRun 'service --help' for usage.\n`);
    return 2;
  }
  if (group === undefined || group === '--help' || group === '-h' || group === 'help') {
    program().help();
    return 0;
  }
  if (group === '--version' || group === '-v') {
    io.out(`service, ${VERSION}\n`);
    return 0;
  }
  io.err(`error: unknown command "${group}"\nRun 'service --help' for usage.\n`);
  return 2;
}
