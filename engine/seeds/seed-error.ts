/**
 * The one error shape for a seed file whose content cannot be used
 * `seed '<n>': <what is wrong>`, code 'node'
 * because it fails that seed's node, not the project load.
 */
import { EngineError } from '../errors.js';

export function seedError(name: string, message: string): EngineError {
  return new EngineError('node', `seed '${name}': ${message}`);
}
