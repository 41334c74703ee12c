/**
 * The resources of a dbt project as entries on their way to nodes: one per
 * model file, per `{% snapshot %}` block and per seed, each with its config
 * from dbt_project.yml's tree and its properties file. Names are unique
 * across the three kinds, case-insensitively (refs are).
 */
import { readFileSync } from 'node:fs';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { mergeConfig, treeConfig } from './config-tree.js';
import { checkConfigKeys, MODEL_KEYS, SEED_KEYS, SNAPSHOT_KEYS } from './dbt-config.js';
import type { DbtFile, DbtFiles } from './dbt-files.js';
import type { DbtProjectFile } from './dbt-project-file.js';
import type { ModelEntry } from './model-entry.js';
import type { Properties, ResourceProps } from './properties.js';

export interface SeedEntry {
  readonly f: DbtFile;
  readonly name: string;
  readonly props: ResourceProps | undefined;
  readonly config: Record<string, unknown>;
}

export interface DbtResources {
  /** Models and snapshots, in file order. */
  readonly models: ModelEntry[];
  readonly seedEntries: SeedEntry[];
  /** Lower-cased name → model or snapshot. */
  readonly byName: Map<string, ModelEntry>;
}

/** A file's folders under its resource path: the config tree's keys above its name. */
export const dirsOf = (rel: string): string[] => (rel.includes('/') ? rel.split('/').slice(0, -1) : []);
export const lower = (s: string): string => s.toLowerCase();

export function collectResources(pf: DbtProjectFile, files: DbtFiles, props: Properties, logger: Logger): DbtResources {
  const seen = new Map<string, string>();
  const claim = (name: string, file: string) => {
    const prev = seen.get(lower(name));
    if (prev) throw new EngineError('load', `duplicate name '${name}': found in both '${prev}' and '${file}'`);
    seen.set(lower(name), file);
  };
  const models: ModelEntry[] = files.models.map((f) => {
    claim(f.stem, f.file);
    const p = props.models.get(lower(f.stem));
    const tree = treeConfig(pf.models, pf.name, [...dirsOf(f.rel), f.stem], MODEL_KEYS);
    return { f, name: f.stem, body: readFileSync(f.abs, 'utf8'), ...(p ? { props: p } : {}), config: mergeConfig(tree, p?.config ?? {}) };
  });
  for (const f of files.snapshots) {
    const text = readFileSync(f.abs, 'utf8');
    const blocks = [...text.matchAll(/\{%-?\s*snapshot\s+([A-Za-z_][A-Za-z0-9_]*)\s*-?%\}([\s\S]*?)\{%-?\s*endsnapshot\s*-?%\}/g)];
    if (blocks.length === 0) logger.log('warn', `${f.file}: not used (no {% snapshot %} block)`);
    for (const b of blocks) {
      const name = b[1]!;
      claim(name, f.file);
      const p = props.snapshots.get(lower(name));
      const tree = treeConfig(pf.snapshots, pf.name, [...dirsOf(f.rel), name], SNAPSHOT_KEYS);
      models.push({ f, name, body: b[2]!, snapshot: true, ...(p ? { props: p } : {}), config: mergeConfig(tree, p?.config ?? {}) });
    }
  }
  for (const [k, p] of props.models) if (!models.some((m) => lower(m.name) === k)) logger.log('warn', `${p.file}: model '${p.name}' is described but no model file defines it`);
  const seedEntries = files.seeds.map((f) => {
    claim(f.stem, f.file);
    const p = props.seeds.get(lower(f.stem));
    const config = mergeConfig(treeConfig(pf.seeds, pf.name, [...dirsOf(f.rel), f.stem], SEED_KEYS), p?.config ?? {});
    checkConfigKeys(f.file, config, SEED_KEYS, logger);
    return { f, name: f.stem, props: p, config };
  });
  return { models, seedEntries, byName: new Map(models.map((m) => [lower(m.name), m])) };
}
