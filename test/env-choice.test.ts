/**
 * envChoice: settings from environment variables with a few known values;
 * an unknown value is named in a warning once per variable and value, and
 * the default applies (SERVICE_COMPILE_CACHE, SERVICE_PARALLEL_RENDER).
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { envChoice, type EnvChoice } from '../engine/env-choice.js';
import type { Level, Logger } from '../engine/log.js';

const NAME = 'SERVICE_TEST_ENV_CHOICE';
const CHOICE: EnvChoice<'on' | 'off'> = { name: NAME, values: { '': 'on', on: 'on', off: 'off', '0': 'off' }, fallback: 'on', expected: 'on or off', instead: 'staying on' };

function collecting(): { logger: Logger; lines: [Level, string][] } {
  const lines: [Level, string][] = [];
  return { lines, logger: { log: (level, message) => void lines.push([level, message]), enabled: () => true } };
}

afterEach(() => {
  delete process.env[NAME];
});

test('known values map case-insensitively; unset is the empty value; no warning', () => {
  const { logger, lines } = collecting();
  assert.equal(envChoice(CHOICE, logger), 'on');
  process.env[NAME] = 'OFF';
  assert.equal(envChoice(CHOICE, logger), 'off');
  process.env[NAME] = '0';
  assert.equal(envChoice(CHOICE, logger), 'off');
  assert.deepEqual(lines, []);
});

test('an unknown value gives the fallback and is named once per value; a prototype key is unknown too', () => {
  const { logger, lines } = collecting();
  process.env[NAME] = 'Sometimes';
  assert.equal(envChoice(CHOICE, logger), 'on');
  assert.equal(envChoice(CHOICE, logger), 'on');
  assert.deepEqual(lines, [['warn', `${NAME}: unknown value 'Sometimes' (expected on or off); staying on`]]);
  process.env[NAME] = 'constructor';
  assert.equal(envChoice(CHOICE, logger), 'on');
  assert.equal(lines.length, 2);
  assert.match(lines[1]![1], /unknown value 'constructor'/);
});
