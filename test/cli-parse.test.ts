/**
 * The one command-line parser: the command table declares every
 * command; the parser checks and reads every token. These cases pin what a
 * lenient parser (mri, under sade) gets wrong and the exact usage errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HANDLERS } from '../cli/command-handlers.js';
import { helpText } from '../cli/command-help.js';
import { COMMANDS, GROUPS } from '../cli/command-table.js';
import { flagSet, flagValue, flagValues, parseCommandLine, UsageError, type ParsedArgs } from '../cli/parse-command-line.js';

function parse(...argv: string[]): ParsedArgs {
  const line = parseCommandLine(argv);
  assert.equal(line.kind, 'command', argv.join(' '));
  return (line as { args: ParsedArgs }).args;
}

function usageError(argv: string[], message: string, topic: string): void {
  assert.throws(() => parseCommandLine(argv), (err: unknown) => {
    assert.ok(err instanceof UsageError, String(err));
    assert.deepEqual([err.message, err.topic], [message, topic], argv.join(' '));
    return true;
  });
}

test('every declared command has a handler, a summary, an example and a help that lists each option', () => {
  assert.deepEqual(Object.keys(HANDLERS).sort(), COMMANDS.map((c) => c.name).sort());
  for (const c of COMMANDS) {
    assert.ok(c.summary.length > 0 && c.examples.length > 0, c.name);
    const group = c.name.split(' ')[0]!;
    if (c.name.includes(' ')) assert.ok(GROUPS.some((g) => g.name === group), `${c.name}: group ${group} is not declared`);
    const help = helpText(c.name);
    for (const o of c.options) assert.ok(help.includes(`--${o.long}`), `${c.name} help lacks --${o.long}`);
    for (const e of c.examples) assert.ok(e.startsWith(`npx service ${c.name}`), `${c.name} example: ${e}`);
  }
});

test('values are taken as written: a leading dash, an empty value before a positional, = inside, attached short values', () => {
  const a = parse('build', 'run', '--select', '-weird', '--vars={"a":"x=y"}', 'models', '-t=DUCK');
  assert.deepEqual([flagValues(a, 'select'), flagValue(a, 'vars'), flagValue(a, 'target'), a.positionals], [['-weird'], '{"a":"x=y"}', 'DUCK', ['models']]);
  const b = parse('project', 'update', '--git-url', '', 'acme');
  assert.deepEqual([flagValue(b, 'git-url'), b.positionals], ['', ['acme']]);
  for (const form of [['-ojson'], ['-o=json'], ['-o', 'json'], ['--output=json'], ['--output', 'json']]) {
    assert.equal(flagValue(parse('jobs', 'list', ...form), 'output'), 'json', form.join(' '));
  }
  // A switch followed by a word does not swallow it; a number stays text.
  const c = parse('build', 'run', '--json', 'false', '--threads', '08');
  assert.deepEqual([flagSet(c, 'json'), c.positionals, flagValue(c, 'threads')], [true, ['false'], '08']);
});

test('repeatable options keep every value; others keep the last; defaults fill in; no-* switches read back', () => {
  const a = parse('build', 'run', '-s', 'a', '--select=b', '-t', 'X', '-t', 'Y', '--no-seeds');
  assert.deepEqual([flagValues(a, 'select'), flagValues(a, 'target'), flagValue(a, 'threads'), flagSet(a, 'no-seeds'), flagSet(a, 'prod')], [['a', 'b'], ['Y'], '4', true, false]);
  assert.deepEqual(flagValues(parse('jobs', 'run', 'job_x', '--var', 'A=1', '--var=B=2'), 'var'), ['A=1', 'B=2']);
  assert.equal(flagValue(parse('serve'), 'port'), '8080');
  assert.equal(flagSet(parse('bench', 'dag'), 'no-micro'), false);
  // `--` ends the options: what follows is positional even when it looks like a flag.
  assert.deepEqual(parse('project', 'create', '--', '-acme').positionals, ['-acme']);
  assert.deepEqual(parse('files', 'save', 'x.txt', '--from', '-').values.get('from'), ['-']);
});

test('usage errors name the flag as typed and the help to read', () => {
  usageError(['build', 'list', '--full-refresh'], "flag --full-refresh is not valid for 'service build list' (applies to: run)", 'build list');
  usageError(['build', 'compile', '-x'], "flag -x is not valid for 'service build compile' (applies to: run, test)", 'build compile');
  usageError(['build', 'run', '-xf'], 'unknown flag: -xf', 'build run');
  usageError(['build', 'run', '--json=yes'], 'flag --json does not take a value', 'build run');
  usageError(['build', 'run', '--target'], 'flag needs an argument: --target', 'build run');
  usageError(['build', 'run', 'a', 'b'], 'accepts at most 1 arg(s), received 2', 'build run');
  usageError(['jobs', 'get'], 'service jobs get needs JOB', 'jobs get');
  usageError(['serve', 'now'], 'unexpected argument: now', 'serve');
  usageError(['serve', '-v'], 'unknown flag: -v', 'serve');
  usageError(['execs', 'rm'], 'unknown execs command "rm", expected list, get, log, or cancel', 'execs');
  usageError(['token', 'rotate'], 'unknown token command "rotate", expected create, list, or revoke', 'token');
  usageError(['token', 'revoke'], 'service token revoke needs ID', 'token revoke');
  usageError(['conns', 'list', '--remote=1'], 'flag --remote does not take a value', 'conns list');
  usageError(['nope'], 'unknown command "nope", expected init, build, run, serve, conns, project, token, cluster, jobs, execs, files, git, or bench', '');
});

test('help wins over everything else and names the deepest topic given', () => {
  const topic = (...argv: string[]) => {
    const line = parseCommandLine(argv);
    return line.kind === 'help' ? line.topic : `(${line.kind})`;
  };
  assert.equal(topic(), '');
  assert.equal(topic('--help'), '');
  assert.equal(topic('build'), 'build');
  assert.equal(topic('build', 'help'), 'build');
  assert.equal(topic('build', '-h', 'run'), 'build');
  assert.equal(topic('build', 'run', '--bogus', '-h'), 'build run');
  assert.equal(topic('conns', 'test', '--help'), 'conns test');
  assert.equal(topic('files', 'get', '--', '--help'), '(command)');
  assert.equal(topic('--version'), '(version)');
});
