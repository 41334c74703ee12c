/**
 * Schedules: five-field expressions only, evaluated in the
 * job's timezone; a DST-gap local time is skipped, an ambiguous one fires at
 * its first occurrence; several expressions on one minute fire once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidTimezone, nextRun, parseCron } from '../engine/jobs/cron.js';

const iso = (d: Date | null) => d?.toISOString() ?? null;

test('accepts the five-field grammar and rejects what the contract rejects', () => {
  for (const ok of ['0 2 * * *', '*/15 * * * *', '0 0 1,15 * *', '0 9-17/2 * JAN-MAR MON-FRI', '0 0 * * 7', '5 4 * * sun']) assert.ok(parseCron(ok), ok);
  for (const bad of ['61 * * * *', '@daily', '* * * * * *', '0 24 * * *', '0 0 0 * *', '0 0 * 13 *', '0 0 * * 8', '5-1 * * * *', '*/0 * * * *', 'x * * * *', '']) {
    assert.equal(parseCron(bad), undefined, bad);
  }
});

test('timezones are IANA names', () => {
  assert.ok(isValidTimezone('Europe/Berlin'));
  assert.ok(isValidTimezone('UTC'));
  assert.equal(isValidTimezone('Mars/Olympus'), false);
});

test('next run in the job timezone (the documented example: 02:00 Berlin = 01:00Z in winter)', () => {
  assert.equal(iso(nextRun(['0 2 * * *'], 'Europe/Berlin', new Date('2025-03-01T08:20:00.000Z'))), '2025-03-02T01:00:00.000Z');
});

test('a local time in the spring-forward gap is skipped, not moved', () => {
  assert.equal(iso(nextRun(['30 2 * * *'], 'Europe/Berlin', new Date('2025-03-29T12:00:00Z'))), '2025-03-31T00:30:00.000Z');
});

test('an ambiguous autumn time fires once, at its first occurrence', () => {
  const first = nextRun(['30 2 * * *'], 'Europe/Berlin', new Date('2025-10-25T12:00:00Z'));
  assert.equal(iso(first), '2025-10-26T00:30:00.000Z');
  assert.equal(iso(nextRun(['30 2 * * *'], 'Europe/Berlin', first!)), '2025-10-27T01:30:00.000Z');
});

test('several expressions: the earliest wins and the same minute fires once', () => {
  const after = new Date('2025-01-01T00:00:30Z');
  assert.equal(iso(nextRun(['0 * * * *', '0 1 * * *', '*/30 * * * *'], 'UTC', after)), '2025-01-01T00:30:00.000Z');
  assert.equal(iso(nextRun([], 'UTC', after)), null);
});

test('day-of-month and day-of-week both restricted: either matches (classic cron)', () => {
  // 2025-01-03 is a Friday; "13th or Friday" fires on the 3rd.
  assert.equal(iso(nextRun(['0 0 13 * 5'], 'UTC', new Date('2025-01-01T00:00:00Z'))), '2025-01-03T00:00:00.000Z');
});
