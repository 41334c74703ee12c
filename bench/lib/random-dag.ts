/** The seeded DAG generator lives in the engine (the `service bench dag` command uses it too). */
export { between, criticalPathLength, prng, randomDag } from '../../engine/bench/random-dag.js';
