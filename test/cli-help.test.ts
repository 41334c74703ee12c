/**
 * `--help` everywhere: every daemon, operator and API-client
 * command answers `-h`/`--help` with its usage, options and an example on
 * stdout, exit 0 — before the token, the store or the daemon is touched.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMMANDS } from '../cli/command-table.js';
import { cli } from './helpers/build-cli.js';

/** Every command of the table, build and bench included. */
const LEAVES = COMMANDS.map((c) => c.name);

test('every command answers --help and -h with usage, options and an example', async () => {
  const saved = { token: process.env.SERVICE_PROJECT_TOKEN, host: process.env.SERVICE_PLATFORM_HOST };
  delete process.env.SERVICE_PROJECT_TOKEN;
  process.env.SERVICE_PLATFORM_HOST = 'http://127.0.0.1:1';
  try {
    for (const command of LEAVES) {
      for (const flag of ['--help', '-h']) {
        const r = await cli(...command.split(' '), flag);
        assert.equal(r.code, 0, `${command} ${flag}: ${r.err}`);
        assert.equal(r.err, '', command);
        assert.ok(r.out.startsWith(`Usage: service ${command}`), `${command}: ${r.out.split('\n')[0]}`);
        assert.match(r.out, /\nExamples:\n  npx service /, command);
      }
    }
    for (const group of ['build', 'jobs', 'execs', 'files', 'project', 'conns', 'token', 'git', 'bench']) {
      const r = await cli(group, '--help');
      assert.equal(r.code, 0);
      assert.match(r.out, new RegExp(`^Usage: service ${group} <command> \\[options\\]\\n\\n.+\\n\\nCommands:\\n`));
    }
    // An argument that would otherwise fail (no such connection) does not matter with --help.
    const conns = await cli('conns', 'test', '--help');
    assert.equal(conns.code, 0);
  } finally {
    if (saved.token !== undefined) process.env.SERVICE_PROJECT_TOKEN = saved.token;
    if (saved.host === undefined) delete process.env.SERVICE_PLATFORM_HOST;
    else process.env.SERVICE_PLATFORM_HOST = saved.host;
  }
});
