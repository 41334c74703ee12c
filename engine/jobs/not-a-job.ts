/**
 * Why a `.yaml`/`.sql` file that looks meant as a job file did not become
 * one (nothing a user declares is dropped in silence): a YAML mapping with
 * job-file keys but no kind key (`steps`, `streams`, `objects`) — often a
 * misspelling — or a `.sql` file without a `-- connection:` header that is
 * not a model (outside any build project, no Jinja). The file is still saved; the save answers with
 * this warning and the daemon logs it.
 */
import { withinDistance } from '../suggest.js';
import { isSqlName, isYamlName } from './classify.js';
import { parseYaml, topLevelKeys } from './yaml-tree.js';

const KIND_KEYS: readonly [string, string][] = [
  ['steps', 'a pipeline'],
  ['streams', 'a replication'],
  ['objects', 'a monitor'],
];
/** Top-level keys only job files use: their presence says the file was meant as one. */
const JOB_KEYS = new Set(['connection', 'source', 'target', 'defaults', 'env', 'schedule', 'description']);

export function notAJobWarning(name: string, text: string, inBuildProject: () => boolean): string | undefined {
  if (isYamlName(name)) {
    const keys = topLevelKeys(parseYaml(text).root);
    if (keys === undefined) return undefined; // a list or a scalar: data, not a job file
    const misspelt: string[] = [];
    for (const key of keys) {
      const meant = KIND_KEYS.find(([k]) => k !== key && withinDistance(key.toLowerCase(), k, 2));
      if (meant) misspelt.push(`"${key}" looks like "${meant[0]}"`);
    }
    if (misspelt.length === 0 && ![...keys].some((k) => JOB_KEYS.has(k))) return undefined;
    const need = KIND_KEYS.map(([k, what]) => `${what} needs a top-level "${k}" key`).join(', ');
    return `${name} was saved as a plain file, not a job file: ${need}${misspelt.length > 0 ? `; ${misspelt.join(', ')}` : ''}`;
  }
  // Jinja (`{{ ref(…) }}`) marks a model template, which a query file never holds.
  if (isSqlName(name) && !/\{\{|\{%/.test(text) && !inBuildProject()) {
    return `${name} was saved as a plain file, not a query job: its header has no "-- connection: NAME" line`;
  }
  return undefined;
}
