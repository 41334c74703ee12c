/**
 * `--help` for the daemon, operator and API-client commands: every command
 * answers `-h`/`--help` with its usage, options and an example, in one layout,
 * on stdout, exit 0 — before any other argument is looked at. (`service build`,
 * `service run`, `service init` and `service bench dag` carry their own.)
 */

interface CommandHelp {
  readonly usage: string;
  readonly summary: string;
  readonly options?: readonly [string, string][];
  readonly examples: readonly string[];
}

const STORE: [string, string][] = [
  ['--data-dir DIR', 'the data directory (default ~/.service/data)'],
  ['--state FILE|URL', 'the state store: a SQLite file (default <data-dir>/state.db) or a postgresql:// URL'],
];
const CLIENT: [string, string][] = [['-o table|json', 'output format (default table)']];
const CLIENT_ENV = 'Uses SERVICE_PROJECT_TOKEN and SERVICE_PLATFORM_HOST (default http://127.0.0.1:8080).';

const HELP: Readonly<Record<string, CommandHelp>> = {
  serve: {
    usage: 'service serve [options]',
    summary: 'Run the daemon: the HTTP API, the scheduler and the executions of every project in the data directory.',
    options: [
      ...STORE,
      ['--host ADDR', 'bind address (default 127.0.0.1)'],
      ['--port N', 'TCP port (default 8080; 0 picks a free one)'],
      ['--max-running N', 'executions running at once (default 4)'],
      ['--grace-period D', 'how long SIGTERM waits for running executions (default 60s)'],
      ['--allow-command-steps', 'let pipeline command steps run'],
    ],
    examples: ['npx service serve --data-dir ./data --port 8080'],
  },
  'project create': {
    usage: 'service project create NAME [options]',
    summary: 'Create a project in the state store and print its id.',
    options: [...STORE, ['--git-url URL', 'follow a git remote'], ['--git-branch B', 'its branch (default main)'], ['--git-poll S', 'pull every S seconds (0 = never)'], ['--git-enabled true|false', 'switch git sync on or off']],
    examples: ['npx service project create acme --data-dir ./data'],
  },
  'project update': {
    usage: 'service project update NAME [options]',
    summary: "Change a project's git settings.",
    options: [...STORE, ['--git-url URL', 'follow a git remote ("" removes it)'], ['--git-branch B', 'its branch'], ['--git-poll S', 'pull every S seconds (0 = never)'], ['--git-enabled true|false', 'switch git sync on or off']],
    examples: ['npx service project update acme --git-url https://github.com/acme/jobs.git --git-poll 60 --data-dir ./data'],
  },
  'project list': { usage: 'service project list [options]', summary: 'List the projects of the state store.', options: STORE, examples: ['npx service project list --data-dir ./data'] },
  'token create': {
    usage: 'service token create --project NAME [options]',
    summary: "Create a project token and print it once (only its SHA-256 is stored).",
    options: [['--project NAME', 'the project (required)'], ['--label L', 'a note kept with the token'], ...STORE],
    examples: ['npx service token create --project acme --data-dir ./data'],
  },
  'jobs list': { usage: 'service jobs list [options]', summary: "List the jobs of the token's project.", options: [['--name N', 'only this job'], ['--file-name F', 'only jobs of this file'], ['--type T', 'replication, pipeline, monitor or query'], ...CLIENT], examples: ['npx service jobs list -o json'] },
  'jobs get': { usage: 'service jobs get JOB_ID [options]', summary: 'Show one job.', options: CLIENT, examples: ['npx service jobs get job_0123456789abcdef'] },
  'jobs run': {
    usage: 'service jobs run JOB_ID [options]',
    summary: 'Run a job now and print the execution id.',
    options: [['--var K=V', 'a run variable (repeatable)'], ['--mode M', 'replication mode for this run'], ['--streams S', 'only these streams (comma-separated)'], ['--select S', 'build steps: only these nodes'], ['--wait', 'wait for the execution to end'], ...CLIENT],
    examples: ['npx service jobs run job_0123456789abcdef --var REGION=eu --wait'],
  },
  'execs list': {
    usage: 'service execs list [options]',
    summary: "List executions of the token's project, newest first.",
    options: [['--status S', 'only this status'], ['--job-id ID', 'only this job'], ['--since T', 'started at or after T (RFC 3339 time or date)'], ['--until T', 'started at or before T'], ['--limit N', 'at most N (1-100)'], ['--asc', 'oldest first'], ...CLIENT],
    examples: ['npx service execs list --status running', 'npx service execs list --since 2026-11-24 -o json'],
  },
  'execs get': { usage: 'service execs get EXEC_ID [options]', summary: 'Show one execution.', options: CLIENT, examples: ['npx service execs get 2p0a1b2c3d4e5f6g7h8i9j0k1l2'] },
  'execs log': { usage: 'service execs log EXEC_ID [options]', summary: 'Print the output of an execution’s tasks or steps.', options: [['--stream S', 'only this task'], ['--step S', 'only this pipeline step'], ...CLIENT], examples: ['npx service execs log 2p0a1b2c3d4e5f6g7h8i9j0k1l2'] },
  'execs cancel': { usage: 'service execs cancel EXEC_ID', summary: 'Cancel a queued or running execution (its statements are cancelled in the database).', examples: ['npx service execs cancel 2p0a1b2c3d4e5f6g7h8i9j0k1l2'] },
  'files list': { usage: 'service files list [options]', summary: "List the project's files.", options: [['--prefix P', 'only names starting with P'], ...CLIENT], examples: ['npx service files list --prefix queries/'] },
  'files get': { usage: 'service files get NAME', summary: "Print a file's content.", examples: ['npx service files get queries/users.sql'] },
  'files save': { usage: 'service files save NAME --from FILE|-', summary: 'Save a file (job files are validated and get a default job).', options: [['--from FILE', 'the content (- reads stdin)']], examples: ['npx service files save queries/users.sql --from ./users.sql'] },
  'git pull': { usage: 'service git pull [options]', summary: "Sync the project's tree from its git branch now.", options: CLIENT, examples: ['npx service git pull'] },
  'conns list': { usage: 'service conns list [options]', summary: "List this machine's connections (./env.yaml, ~/.service/env.yaml, URL variables), or the daemon's with --remote.", options: [['--remote', "ask the daemon for the token's project"], ...CLIENT], examples: ['npx service conns list', 'npx service conns list --remote -o json'] },
  'conns test': { usage: 'service conns test NAME [options]', summary: 'Connect with a 10 s timeout and run select 1 (or list a file connection’s folder).', options: [['--remote', 'ask the daemon to test it']], examples: ['npx service conns test WAREHOUSE'] },
};

const CLIENT_GROUPS = new Set(['jobs', 'execs', 'files', 'git']);

/** The help of `group [sub]` when argv asks for it (`-h`/`--help` anywhere); undefined otherwise. */
export function commandHelpFor(group: string, argv: readonly string[]): string | undefined {
  if (!argv.includes('--help') && !argv.includes('-h')) return undefined;
  const sub = argv.find((a) => !a.startsWith('-'));
  const key = sub !== undefined && HELP[`${group} ${sub}`] ? `${group} ${sub}` : group;
  const h = HELP[key];
  if (h === undefined) {
    // A group: its commands, one line each.
    const subs = Object.entries(HELP).filter(([k]) => k.startsWith(`${group} `));
    if (subs.length === 0) return undefined;
    return `Usage: service ${group} <command> [options]\n\nCommands:\n${subs.map(([k, v]) => `  ${k.padEnd(16)} ${v.summary}`).join('\n')}\n\nRun 'service ${group} <command> --help' for its options.\n`;
  }
  const width = Math.max(0, ...(h.options ?? []).map(([f]) => f.length)) + 2;
  const lines = [`Usage: ${h.usage}`, '', h.summary];
  if (CLIENT_GROUPS.has(group) || (group === 'conns' && argv.includes('--remote'))) lines.push(CLIENT_ENV);
  if (h.options && h.options.length > 0) lines.push('', 'Options:', ...h.options.map(([f, d]) => `  ${f.padEnd(width)}${d}`), `  ${'-h, --help'.padEnd(width)}this help`);
  lines.push('', 'Examples:', ...h.examples.map((e) => `  ${e}`));
  return lines.join('\n') + '\n';
}

/** Every command this table documents, in order (for the generated CLI reference). */
export const HELPED_COMMANDS: readonly string[] = Object.keys(HELP);
