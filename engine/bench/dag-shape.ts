/**
 * Synthetic DAG shapes for `service bench dag`. A shape is `deps[i]`: the
 * indexes node i depends on, all smaller than i (index order is a
 * topological order), so the supervisor gets its nodes already in DAG order.
 */
import { EngineError } from '../errors.js';
import { randomDag } from './random-dag.js';

export const SHAPES = ['chain', 'wide', 'diamond', 'random'] as const;
export type ShapeName = (typeof SHAPES)[number];

export interface ShapeOptions {
  readonly shape: ShapeName;
  /** Total nodes (≥ 1). */
  readonly nodes: number;
  /** `chain`: how many independent chains share the nodes (default 1). */
  readonly width?: number;
  /** `random`: PRNG seed (default 1). */
  readonly seed?: number;
  /** `random`: most parents per node (default 3). */
  readonly maxDeps?: number;
}

/**
 * - `chain`: `width` independent chains of `nodes / width` each (node i follows i - width);
 * - `wide`: one root, every other node depends on it;
 * - `diamond`: one root, a middle layer of `nodes - 2` nodes, one sink that depends on all of them;
 * - `random`: each node depends on 1..maxDeps earlier nodes (seeded, reproducible).
 */
export function dagShape(opts: ShapeOptions): number[][] {
  const n = opts.nodes;
  if (!Number.isInteger(n) || n < 1) throw new EngineError('usage', `--nodes must be a positive integer, got ${n}`);
  switch (opts.shape) {
    case 'chain': {
      const width = opts.width ?? 1;
      if (!Number.isInteger(width) || width < 1) throw new EngineError('usage', `--width must be a positive integer, got ${width}`);
      return Array.from({ length: n }, (_, i) => (i >= width ? [i - width] : []));
    }
    case 'wide':
      return Array.from({ length: n }, (_, i) => (i === 0 ? [] : [0]));
    case 'diamond':
      if (n < 3) return dagShape({ shape: 'chain', nodes: n });
      return Array.from({ length: n }, (_, i) => {
        if (i === 0) return [];
        if (i < n - 1) return [0];
        return Array.from({ length: n - 2 }, (_, k) => k + 1);
      });
    case 'random': {
      const maxDeps = opts.maxDeps ?? 3;
      if (!Number.isInteger(maxDeps) || maxDeps < 1) throw new EngineError('usage', `--max-deps must be a positive integer, got ${maxDeps}`);
      return randomDag(n, opts.seed ?? 1, 1, maxDeps);
    }
  }
}
