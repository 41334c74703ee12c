/**
 * The yaml library, loaded on first use: it is 74 modules (≈40 ms to load on
 * the 2-core bench machine), and a command whose project compiles from the
 * compile cache and has no YAML file to read besides its config need not
 * pay for it before it has a file to parse.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let lib: typeof Yaml | undefined;

export function yamlLib(): typeof Yaml {
  return (lib ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

/** `yaml.parse(text)`. */
export function parseYaml(text: string): unknown {
  return yamlLib().parse(text);
}
