/**
 * Identifiers: formats, token digests, and KSUID execution
 * ids that sort by creation even within one second.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execIdTime, isExecId, isJobId, isProjectId, isTokenShape, newExecId, newJobId, newProjectId, newToken, sha256hex } from '../engine/state/ids.js';

test('project and job ids: prefix + 16 characters of [a-z0-9], unique', () => {
  const projects = Array.from({ length: 1000 }, newProjectId);
  const jobs = Array.from({ length: 1000 }, newJobId);
  for (const id of projects) assert.match(id, /^proj_[a-z0-9]{16}$/);
  for (const id of jobs) assert.match(id, /^job_[a-z0-9]{16}$/);
  assert.equal(new Set(projects).size, 1000);
  assert.equal(new Set(jobs).size, 1000);
  assert.ok(isProjectId('proj_x4hh5344tfjgvq4k') && !isProjectId('proj_X4hh5344tfjgvq4k') && !isProjectId('job_wb3wkh5dnsipzz5f'));
  assert.ok(isJobId('job_wb3wkh5dnsipzz5f') && !isJobId('job_wb3wkh5dnsipzz5'));
});

test('tokens are lowercase UUID v4; the store keeps their SHA-256 hex digest', () => {
  const tokens = Array.from({ length: 100 }, newToken);
  for (const t of tokens) assert.ok(isTokenShape(t), t);
  assert.equal(new Set(tokens).size, 100);
  assert.ok(isTokenShape('8aa4248c-8857-49a4-b908-f227c59db916'));
  assert.ok(!isTokenShape('8AA4248C-8857-49A4-B908-F227C59DB916'), 'upper case');
  assert.ok(!isTokenShape('8aa4248c-8857-19a4-b908-f227c59db916'), 'not version 4');
  assert.ok(!isTokenShape('not-a-token'));
  assert.equal(sha256hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('execution ids are 27-character base62 KSUIDs with the standard epoch', () => {
  // The KSUID reference example: 0ujtsYcgvSTl8PAuAdqWYSMnLOv has timestamp 107608047.
  assert.equal(execIdTime('0ujtsYcgvSTl8PAuAdqWYSMnLOv').getTime(), (1_400_000_000 + 107_608_047) * 1000);
  const now = new Date('2025-03-01T08:30:00.250Z');
  const id = newExecId(now);
  assert.ok(isExecId(id), id);
  assert.equal(execIdTime(id).toISOString(), '2025-03-01T08:30:00.000Z');
});

test('execution ids sort by creation, also within one second and when the clock steps back', () => {
  const t = Date.parse('2030-01-01T00:00:00.000Z');
  const ids = [
    ...Array.from({ length: 500 }, () => newExecId(new Date(t))),
    newExecId(new Date(t - 5000)), // clock stepped back: still after the previous id
    newExecId(new Date(t + 1000)),
    newExecId(new Date(t + 1500)),
  ];
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]} at ${i}`);
  assert.equal(execIdTime(ids[500]!).getTime(), t, 'a step back keeps the last second');
  assert.equal(execIdTime(ids.at(-1)!).getTime(), t + 1000);
  assert.ok(newExecId() > ids.at(-1)!, 'an id made at an earlier wall-clock time than the last one still sorts after it');
});
