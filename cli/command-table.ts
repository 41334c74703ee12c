/**
 * Every command of the `service` program, as data: its arguments, options
 * (with defaults and descriptions) and examples. This one table feeds
 * everything the CLI says about itself:
 *
 * - the parser (parse-command-line.ts), which resolves the command, checks
 *   every token and reads the options;
 * - every `--help` text (command-help.ts), in one layout;
 * - the CLI reference, docs/cli.md (`npm run docs:cli`).
 *
 * To add a command: append a `CommandDef` here (its group in GROUPS if the
 * group is new) and map its name to a handler in command-handlers.ts.
 * To add a flag: add an `OptionDef` to the commands that accept it — the
 * parser then accepts it there, reports it as "not valid" for the sibling
 * commands of the same group, and the help and docs list it. The handler
 * reads it with `flagValue(args, 'long-name')`. Run `npm run docs:cli`.
 */

export interface OptionDef {
  /** Long name without dashes: `target` for `--target`. */
  readonly long: string;
  /** One letter, without the dash. */
  readonly short?: string;
  /** The value's placeholder in help (`NAME`); absent for a switch. */
  readonly value?: string;
  /** Several occurrences are all kept (`--select a --select b`); otherwise the last wins. */
  readonly repeatable?: boolean;
  /** Filled in by the parser when the option is not given; shown in help as `(default …)`. */
  readonly default?: string | number;
  readonly help: string;
}

export interface CommandDef {
  /** `build run`, `serve`, `jobs get`. */
  readonly name: string;
  /** Positional arguments in usage notation: `<FILE>` required, `[PATH]` optional. */
  readonly args?: string;
  readonly summary: string;
  /** More paragraphs for the help text (between the summary and the options). */
  readonly details?: string;
  readonly options: readonly OptionDef[];
  readonly examples: readonly string[];
  /** The usage error for too many positionals (default `unexpected argument: X`). */
  readonly tooManyArgs?: (received: number) => string;
  /**
   * A command added beside a group's contracted set (`build graph`): listed in
   * help, but not in the `expected …` list of an unknown-command error, whose
   * wording scripts match.
   */
  readonly unlisted?: boolean;
}

export interface GroupDef {
  readonly name: string;
  readonly summary: string;
  readonly details?: string;
}

const BUILD_DETAILS = "The examples run in the project 'service init' writes (its models/ folder); examples/shop in the package is a larger one.";

/** Command groups: `service <group> <command> …`. */
export const GROUPS: readonly GroupDef[] = [
  { name: 'build', summary: 'Compile and run a folder of Jinja-templated SQL models.' },
  { name: 'conns', summary: "Connections: this machine's (env.yaml here, ~/.service/env.yaml, URL variables), or the daemon's with --remote." },
  { name: 'project', summary: 'Operator: projects in the state store (works beside a running daemon).' },
  { name: 'token', summary: 'Operator: project tokens.' },
  { name: 'cluster', summary: 'Operator, cluster mode: the daemons sharing one PostgreSQL state store (see docs/cluster.md).' },
  { name: 'jobs', summary: "API client: the jobs of the token's project." },
  { name: 'execs', summary: "API client: the executions of the token's project." },
  { name: 'files', summary: "API client: the project's files." },
  { name: 'git', summary: "API client: the project's git sync." },
  { name: 'bench', summary: 'Benchmarks.' },
];

const HELP: OptionDef = { long: 'help', short: 'h', help: 'show this help' };

const STORE: readonly OptionDef[] = [
  { long: 'data-dir', value: 'DIR', help: 'the data directory (default ~/.service/data)' },
  { long: 'state', value: 'FILE|URL', help: 'the state store: a SQLite file (default <data-dir>/state.db) or a postgresql:// URL' },
];
const OUTPUT: OptionDef = { long: 'output', short: 'o', value: 'table|json', default: 'table', help: 'output format' };
const CLIENT_ENV = 'Uses SERVICE_PROJECT_TOKEN and SERVICE_PLATFORM_HOST (default http://127.0.0.1:8080).';
const JOB_REF = 'JOB is a job id (job_…) or the name of exactly one job.';
const CONNS_ENV = 'With --remote, or when SERVICE_PLATFORM_HOST is set, the daemon answers for the project of SERVICE_PROJECT_TOKEN.';
const GIT: readonly OptionDef[] = [
  { long: 'git-url', value: 'URL', help: 'follow a git remote' },
  { long: 'git-branch', value: 'B', help: 'its branch (default main)' },
  { long: 'git-poll', value: 'S', help: 'pull every S seconds (0 = never)' },
  { long: 'git-enabled', value: 'true|false', help: 'switch git sync on or off' },
];

type BuildCommand = 'run' | 'list' | 'test' | 'compile';
const ALL: readonly BuildCommand[] = ['run', 'list', 'test', 'compile'];

/** The flags of `service build`, with the commands each one applies to (one table, so help and parser agree). */
const BUILD_FLAGS: readonly (OptionDef & { readonly commands: readonly BuildCommand[] })[] = [
  { long: 'target', short: 't', value: 'NAME', commands: ALL, help: 'target connection name' },
  { long: 'select', short: 's', value: 'SEL', repeatable: true, commands: ALL, help: 'select nodes (repeatable, comma-separated)' },
  { long: 'exclude', value: 'SEL', repeatable: true, commands: ALL, help: 'exclude nodes (repeatable, comma-separated)' },
  { long: 'schema', value: 'NAME', commands: ALL, help: 'dev mode with this schema' },
  { long: 'prod', commands: ALL, help: 'force prod naming' },
  { long: 'vars', value: 'JSON', commands: ALL, help: 'template variables as a JSON object' },
  { long: 'recursive', short: 'R', commands: ALL, help: 'build child projects (sub-directories with their own config)' },
  { long: 'json', commands: ALL, help: 'machine-readable output on stdout' },
  { long: 'debug', short: 'd', commands: ALL, help: 'debug logging (rendered SQL, chunks, probes)' },
  { long: 'trace', commands: ALL, help: 'trace logging' },
  { long: 'full-refresh', short: 'f', commands: ['run'], help: 'rebuild every selected model from scratch' },
  { long: 'range', value: 'START,END[,STEP]', commands: ['run'], help: 'backfill range' },
  { long: 'no-seeds', commands: ['run'], help: 'skip loading seeds' },
  { long: 'threads', value: 'N', default: 4, commands: ['run', 'test'], help: 'parallel node executions (below 1 means the default)' },
  { long: 'fail-fast', short: 'x', commands: ['run', 'test'], help: 'stop starting nodes after the first failure' },
  { long: 'profiles-dir', value: 'DIR', commands: ALL, help: 'dbt projects: the directory holding profiles.yml' },
  { long: 'freshness', commands: ['test'], help: "dbt projects: check the sources' freshness instead of the data tests" },
];

const BUILD_SUMMARY: Record<BuildCommand, string> = {
  run: 'Materialize the selected models, then run their data tests.',
  list: 'List the selected models (no target needed).',
  test: 'Run data tests only (no materialization).',
  compile: 'Render SQL and the DAG; execute nothing.',
};
const BUILD_EXAMPLES: Record<BuildCommand, readonly string[]> = {
  run: ['npx service build run models', 'npx service build run models -s stg_customers+ --threads 8 --json'],
  list: ['npx service build list models -s tag:daily'],
  test: ['npx service build test models -x'],
  compile: ['npx service build compile models --json'],
};

const buildCommand = (c: BuildCommand): CommandDef => ({
  name: `build ${c}`,
  args: '[path]',
  summary: BUILD_SUMMARY[c],
  details: c === 'run' ? `Without a service_build.yml at the path, --target or -R, run prints this help (saying why on stderr) and builds nothing.\n\n${BUILD_DETAILS}` : BUILD_DETAILS,
  options: [...BUILD_FLAGS.filter((f) => f.commands.includes(c)).map(({ commands: _c, ...o }) => o), HELP],
  examples: BUILD_EXAMPLES[c],
  tooManyArgs: (n) => `accepts at most 1 arg(s), received ${n}`,
});

export const COMMANDS: readonly CommandDef[] = [
  {
    name: 'init',
    args: '[DIR]',
    summary: 'Create a runnable build project in DIR (default: the current directory).',
    details: [
      '  models/service_build.yml           target LOCAL_DUCK, defaults.mode: full-refresh',
      '  models/env.yaml                    LOCAL_DUCK: a DuckDB file, warehouse.duckdb beside models/',
      '  models/raw/customers.csv           a seed',
      '  models/staging/stg_customers.sql   a view with unique and not-null tests',
      '  models/marts/customers_by_city.sql a table with an expression test',
      '',
      'Nothing is overwritten: init stops if any of these files exists.',
    ].join('\n'),
    options: [HELP],
    examples: ['npx service init my-project && cd my-project && npx service build run models'],
  },
  ...ALL.map(buildCommand),
  {
    name: 'build graph',
    args: '[path]',
    summary: 'Draw the lineage of the models and seeds (no target needed): SVG (the web console\'s picture), Graphviz DOT or Mermaid, on stdout.',
    details: BUILD_DETAILS,
    options: [
      { long: 'format', value: 'svg|dot|mermaid', default: 'svg', help: 'output format' },
      ...BUILD_FLAGS.filter((f) => ['select', 'exclude', 'schema', 'prod', 'vars'].includes(f.long)).map(({ commands: _c, ...o }) => o),
      HELP,
    ],
    examples: ['npx service build graph models > models.svg', 'npx service build graph models --format mermaid -s +customers_by_city'],
    tooManyArgs: (n) => `accepts at most 1 arg(s), received ${n}`,
    unlisted: true,
  },
  {
    name: 'run',
    args: '<FILE>',
    summary: 'Run a job file (replication, pipeline, monitor or query) on this machine, without a daemon.',
    details: 'Connections: env.yaml beside the file, ~/.service/env.yaml, URL-valued environment variables.',
    options: [
      { long: 'json', help: 'print the execution (with its tasks or steps) as one JSON object on stdout' },
      { long: 'var', value: 'K=V', repeatable: true, help: 'a run variable for ${K} (repeatable)' },
      { long: 'state', value: 'FILE|URL', help: 'keep executions in this state store (a SQLite file or a postgresql:// URL) instead of in memory, so a monitor compares with its previous run and raises change events' },
      { long: 'allow-command-steps', help: 'let pipeline command steps run (off by default, as for service serve)' },
      HELP,
    ],
    examples: ['npx service run queries/rebuild.sql --json', 'npx service run monitors/orders.yaml --state ./.service-state.db --var DAY=2026-11-24'],
  },
  {
    name: 'serve',
    summary: 'Run the daemon: the HTTP API, the scheduler and the executions of every project in the data directory.',
    options: [
      ...STORE,
      { long: 'host', value: 'ADDR', default: '127.0.0.1', help: 'bind address' },
      { long: 'port', value: 'N', default: 8080, help: 'TCP port (0 picks a free one)' },
      { long: 'max-running', value: 'N', default: 4, help: 'executions running at once' },
      { long: 'grace-period', value: 'D', default: '60s', help: 'how long SIGTERM waits for running executions' },
      { long: 'allow-command-steps', help: 'let pipeline command steps run' },
      HELP,
    ],
    examples: ['npx service serve --data-dir ./data --port 8080'],
  },
  {
    name: 'conns list',
    summary: "List this machine's connections (./env.yaml, ~/.service/env.yaml, URL variables), or the daemon's with --remote.",
    details: CONNS_ENV,
    options: [{ long: 'remote', help: "ask the daemon for the token's project" }, OUTPUT, HELP],
    examples: ['npx service conns list', 'npx service conns list --remote -o json'],
  },
  {
    name: 'conns test',
    args: '<NAME>',
    summary: 'Connect with a 10 s timeout and run select 1 (or list a file connection’s folder).',
    details: CONNS_ENV,
    options: [{ long: 'remote', help: 'ask the daemon to test it' }, HELP],
    examples: ['npx service conns test WAREHOUSE'],
  },
  {
    name: 'project create',
    args: '<NAME>',
    summary: 'Create a project in the state store and print its id.',
    options: [...STORE, ...GIT, HELP],
    examples: ['npx service project create acme --data-dir ./data'],
  },
  {
    name: 'project update',
    args: '<NAME>',
    summary: "Change a project's git settings (only the ones given).",
    options: [...STORE, { ...GIT[0]!, help: 'follow a git remote ("" removes it)' }, { ...GIT[1]!, help: 'its branch' }, GIT[2]!, GIT[3]!, HELP],
    examples: ['npx service project update acme --git-url https://github.com/acme/jobs.git --git-poll 60 --data-dir ./data'],
  },
  { name: 'project list', summary: 'List the projects of the state store.', options: [...STORE, HELP], examples: ['npx service project list --data-dir ./data'] },
  {
    name: 'project delete',
    args: '<NAME>',
    summary: 'Delete a project: its tokens, jobs, executions and files directory. Refused while one of its executions is queued or running.',
    options: [...STORE, HELP],
    examples: ['npx service project delete acme --data-dir ./data'],
  },
  {
    name: 'token create',
    summary: 'Create a project token and print it once (only its SHA-256 is stored).',
    options: [{ long: 'project', value: 'NAME', help: 'the project (required)' }, { long: 'label', value: 'L', help: 'a note kept with the token' }, ...STORE, HELP],
    examples: ['npx service token create --project acme --data-dir ./data'],
  },
  {
    name: 'token list',
    summary: 'List the stored tokens: id (the first 12 hex digits of the SHA-256 digest), project, label, creation time. Never the tokens themselves.',
    options: [{ long: 'project', value: 'NAME', help: 'only the tokens of this project' }, ...STORE, OUTPUT, HELP],
    examples: ['npx service token list --project acme --data-dir ./data'],
  },
  {
    name: 'token revoke',
    args: '<ID>',
    summary: 'Revoke a token by the id token list shows; the daemon refuses it from its next request on.',
    options: [...STORE, HELP],
    examples: ['npx service token revoke 3f9a0c1d2e4b --data-dir ./data'],
  },
  {
    name: 'cluster status',
    summary: 'List the daemons of the cluster: state, heartbeat age, running executions, version, URL (read from the state store itself).',
    options: [...STORE, { long: 'json', help: 'print {daemons: […]} as JSON' }, HELP],
    examples: ['npx service cluster status --state postgresql://service@db/service'],
  },
  {
    name: 'cluster token',
    summary: 'Create an operator token for GET /cluster and print it once (send it as Authorization: Service-Operator-Token <token>).',
    options: [...STORE, { long: 'label', value: 'L', help: 'a note kept with the token' }, HELP],
    examples: ['npx service cluster token --state postgresql://service@db/service --label ops'],
  },
  {
    name: 'jobs list',
    summary: "List the jobs of the token's project.",
    details: CLIENT_ENV,
    options: [{ long: 'name', value: 'N', help: 'only this job' }, { long: 'file-name', value: 'F', help: 'only jobs of this file' }, { long: 'type', value: 'T', help: 'replication, pipeline, monitor or query' }, OUTPUT, HELP],
    examples: ['npx service jobs list -o json'],
  },
  {
    name: 'jobs get',
    args: '<JOB>',
    summary: 'Show one job (JSON by default; -o table lists its fields).',
    details: `${JOB_REF} ${CLIENT_ENV}`,
    options: [{ ...OUTPUT, default: 'json' }, HELP],
    examples: ['npx service jobs get job_0123456789abcdef', 'npx service jobs get users -o table'],
  },
  {
    name: 'jobs run',
    args: '<JOB>',
    summary: 'Run a job now and print the execution id (-o json: the API answer; with --wait, the finished execution).',
    details: `${JOB_REF} ${CLIENT_ENV}`,
    options: [
      { long: 'var', value: 'K=V', repeatable: true, help: 'a run variable (repeatable)' },
      { long: 'mode', value: 'M', help: 'replication mode for this run' },
      { long: 'streams', value: 'S', help: 'only these streams (comma-separated)' },
      { long: 'select', value: 'S', help: 'build steps: only these nodes (comma-separated)' },
      { long: 'wait', help: 'wait for the execution to end (exit 0 for success or warning, 1 otherwise)' },
      OUTPUT,
      HELP,
    ],
    examples: ['npx service jobs run job_0123456789abcdef --var REGION=eu --wait', 'npx service jobs run users -o json'],
  },
  {
    name: 'jobs save',
    summary: 'Create a job, or replace one whose id is given: a Job as JSON or YAML ({job: …} or the job itself).',
    details: CLIENT_ENV,
    options: [{ long: 'from', value: 'FILE', help: 'the job (- or absent: standard input)' }, OUTPUT, HELP],
    examples: ['npx service jobs save --from nightly-users.yaml'],
  },
  { name: 'jobs activate', args: '<JOB>', summary: "Set a job's active flag, so its schedules fire.", details: `${JOB_REF} ${CLIENT_ENV}`, options: [OUTPUT, HELP], examples: ['npx service jobs activate users'] },
  { name: 'jobs deactivate', args: '<JOB>', summary: "Clear a job's active flag (it can still be run on request).", details: `${JOB_REF} ${CLIENT_ENV}`, options: [OUTPUT, HELP], examples: ['npx service jobs deactivate users'] },
  {
    name: 'execs list',
    summary: "List executions of the token's project, newest first.",
    details: CLIENT_ENV,
    options: [
      { long: 'status', value: 'S', help: 'only this status' },
      { long: 'job-id', value: 'ID', help: 'only this job' },
      { long: 'since', value: 'T', help: 'started at or after T (RFC 3339 time or date)' },
      { long: 'until', value: 'T', help: 'started at or before T' },
      { long: 'limit', value: 'N', help: 'at most N (1-100)' },
      { long: 'asc', help: 'oldest first' },
      OUTPUT,
      HELP,
    ],
    examples: ['npx service execs list --status running', 'npx service execs list --since 2026-11-24 -o json'],
  },
  { name: 'execs get', args: '<EXEC_ID>', summary: 'Show one execution: its fields as a table, or the record with -o json.', details: CLIENT_ENV, options: [OUTPUT, HELP], examples: ['npx service execs get 2p0a1b2c3d4e5f6g7h8i9j0k1l2', 'npx service execs get 2p0a1b2c3d4e5f6g7h8i9j0k1l2 -o json'] },
  {
    name: 'execs log',
    args: '<EXEC_ID>',
    summary: 'Print the output of an execution’s tasks or steps.',
    details: CLIENT_ENV,
    options: [
      { long: 'stream', value: 'S', help: 'only this task' },
      { long: 'step', value: 'S', help: 'only this pipeline step' },
      { long: 'status', value: 'S', help: 'only tasks or steps with this status' },
      { long: 'follow', short: 'f', help: 'follow a queued or running execution until it ends, printing output as it grows (exit 0 for success or warning, 1 otherwise)' },
      OUTPUT,
      HELP,
    ],
    examples: ['npx service execs log 2p0a1b2c3d4e5f6g7h8i9j0k1l2', 'npx service execs log 2p0a1b2c3d4e5f6g7h8i9j0k1l2 -f'],
  },
  { name: 'execs cancel', args: '<EXEC_ID>', summary: 'Cancel a queued or running execution (its statements are cancelled in the database).', details: CLIENT_ENV, options: [OUTPUT, HELP], examples: ['npx service execs cancel 2p0a1b2c3d4e5f6g7h8i9j0k1l2'] },
  { name: 'files list', summary: "List the project's files.", details: CLIENT_ENV, options: [{ long: 'prefix', value: 'P', help: 'only names starting with P' }, OUTPUT, HELP], examples: ['npx service files list --prefix queries/'] },
  { name: 'files get', args: '<NAME>', summary: "Print a file's content.", details: CLIENT_ENV, options: [OUTPUT, HELP], examples: ['npx service files get queries/users.sql'] },
  {
    name: 'files save',
    args: '<NAME>',
    summary: 'Save a file (job files are validated and get a default job).',
    details: CLIENT_ENV,
    options: [{ long: 'from', value: 'FILE', help: 'the content (- or absent: standard input)' }, OUTPUT, HELP],
    examples: ['npx service files save queries/users.sql --from ./users.sql'],
  },
  {
    name: 'files delete',
    args: '<NAME>',
    summary: 'Delete a file, or a directory with everything under it (the default jobs of deleted job files go with them).',
    details: CLIENT_ENV,
    options: [OUTPUT, HELP],
    examples: ['npx service files delete replications/legacy.yaml'],
  },
  {
    name: 'files rename',
    args: '<OLD> <NEW>',
    summary: 'Move a file or directory; the jobs of moved job files follow it.',
    details: CLIENT_ENV,
    options: [OUTPUT, HELP],
    examples: ['npx service files rename replications/users.yaml replications/crm_users.yaml'],
  },
  { name: 'git pull', summary: "Sync the project's tree from its git branch now.", details: CLIENT_ENV, options: [OUTPUT, HELP], examples: ['npx service git pull'] },
  {
    name: 'bench dag',
    summary: 'Run a synthetic DAG through the supervisor and the worker pool and compare the wall time with the ideal schedule of the same task durations.',
    options: [
      { long: 'shape', value: 'NAME', default: 'diamond', help: 'chain, wide, diamond or random' },
      { long: 'nodes', value: 'N', default: 64, help: 'number of nodes' },
      { long: 'width', value: 'W', default: 1, help: 'chain: number of independent chains' },
      { long: 'seed', value: 'S', default: 1, help: 'random: PRNG seed' },
      { long: 'max-deps', value: 'K', default: 3, help: 'random: most parents per node' },
      { long: 'task', value: 'KIND', default: 'sleep:50', help: 'noop, sleep:<ms>, cpu:<ms> or sql' },
      { long: 'connection', value: 'NAME', help: 'sql: a postgres connection (env.yaml here, ~/.service/env.yaml, URL variables)' },
      { long: 'sql', value: 'TEXT', help: 'sql: the statement each node runs (default select 1)' },
      { long: 'threads', value: 'N', default: 4, help: 'tasks running at once' },
      { long: 'no-micro', help: 'skip the tinybench pool round-trip measurement' },
      { long: 'json', help: 'print the report as one JSON object on stdout' },
      HELP,
    ],
    examples: [
      'npx service bench dag --shape diamond --nodes 64 --task sleep:50 --threads 4',
      'npx service bench dag --shape chain --width 4 --nodes 64 --task sql --connection pg --sql "select pg_sleep(0.05)" --json',
      'npx service bench dag --shape random --seed 7 --nodes 1000 --task noop --threads 8',
    ],
  },
];

export const commandByName: ReadonlyMap<string, CommandDef> = new Map(COMMANDS.map((c) => [c.name, c]));
export const groupByName: ReadonlyMap<string, GroupDef> = new Map(GROUPS.map((g) => [g.name, g]));

/** The commands of a group, in table order. */
export const commandsOf = (group: string): readonly CommandDef[] => COMMANDS.filter((c) => c.name.startsWith(`${group} `));
