/**
 * The supervisor's persistent arrays (actors/persistent.ts) against plain
 * arrays: every older version keeps its contents while newer ones are
 * edited (their chunks are frozen, so a write to a shared chunk throws).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Queue, Vec } from '../actors/persistent.js';

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('persistent arrays', () => {
  it('Vec: sets and pushes across chunks never change an earlier version', () => {
    const random = rng(7);
    let v = Vec.of<number>([1, 2, 3]);
    const plain = [1, 2, 3];
    const history: [Vec<number>, number[]][] = [[v, plain.slice()]];
    for (let step = 0; step < 1500; step++) {
      const d = v.edit();
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) {
        const x = Math.floor(random() * 1e6);
        if (random() < 0.4) {
          d.push(x);
          plain.push(x);
        } else {
          const i = Math.floor(random() * plain.length);
          d.set(i, x);
          plain[i] = x;
        }
      }
      v = d.done();
      for (const chunk of v.chunks) Object.freeze(chunk);
      history.push([v, plain.slice()]);
    }
    assert.ok(plain.length > 500, 'the vector grew over many chunks');
    for (const [version, expected] of history) {
      assert.equal(version.length, expected.length);
      assert.deepEqual(version.toArray(), expected);
      assert.equal(version.at(expected.length - 1), expected[expected.length - 1]);
    }
  });

  it('Queue: FIFO order through pushes, shifts and clears; earlier versions unchanged', () => {
    const random = rng(11);
    let q = Queue.empty<number>();
    let plain: number[] = [];
    const history: [Queue<number>, number[]][] = [];
    for (let step = 0; step < 3000; step++) {
      const d = q.edit();
      if (random() < 0.55) {
        d.push(step);
        plain.push(step);
      } else {
        assert.equal(d.shift(), plain.shift());
      }
      if (random() < 0.01) {
        d.clear();
        plain = [];
      }
      q = d.done();
      for (const chunk of q.items.chunks) Object.freeze(chunk);
      history.push([q, plain.slice()]);
    }
    for (const [version, expected] of history) {
      assert.equal(version.size, expected.length);
      assert.deepEqual(version.items.toArray().slice(version.head), expected);
    }
  });
});
