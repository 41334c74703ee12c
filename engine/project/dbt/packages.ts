/**
 * The packages a dbt project uses, found where `dbt deps` puts them:
 * `local:` packages at their path (relative to the project that declares
 * them), hub, git and tarball packages under `dbt_packages/<name>`, where
 * `<name>` is the package's own `name:` from its dbt_project.yml (not the
 * repository's name). A package's own declared packages are resolved the
 * same way (dbt installs them beside it). A declared package that is not
 * there is an error saying to run `dbt deps`: we cannot download packages.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseYaml } from '../../yaml-lib.js';
import { EngineError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { yamlErrorDetail } from '../yaml-error.js';

export interface DbtPackage {
  /** The package's `name:` (its macro namespace). */
  readonly name: string;
  readonly dir: string;
  /** How it is shown in messages: `dbt_packages/dbt_utils` or the local path. */
  readonly label: string;
}

interface Declared {
  readonly file: string;
  readonly kind: 'local' | 'package' | 'git' | 'tarball' | 'private';
  readonly spec: string;
  readonly name?: string;
}

const projectName = (dir: string): string | undefined => {
  const f = join(dir, 'dbt_project.yml');
  if (!existsSync(f)) return undefined;
  try {
    const doc = parseYaml(readFileSync(f, 'utf8')) as { name?: unknown } | null;
    return typeof doc?.name === 'string' ? doc.name : undefined;
  } catch (err) {
    throw new EngineError('load', `${f}: could not parse: ${yamlErrorDetail(err)}`);
  }
};

/** The entries of packages.yml (or dependencies.yml) in `dir`. */
export function declaredPackages(dir: string, shown: string): Declared[] {
  for (const f of ['packages.yml', 'dependencies.yml']) {
    const p = join(dir, f);
    if (!existsSync(p)) continue;
    let doc: unknown;
    try {
      doc = parseYaml(readFileSync(p, 'utf8'));
    } catch (err) {
      throw new EngineError('load', `${shown}${f}: could not parse: ${yamlErrorDetail(err)}`);
    }
    const list = (doc as { packages?: unknown } | null)?.packages ?? [];
    if (!Array.isArray(list)) throw new EngineError('load', `${shown}${f}: packages must be a list`);
    return list.map((e: Record<string, unknown>, i) => {
      for (const kind of ['local', 'package', 'git', 'tarball', 'private'] as const) {
        if (typeof e?.[kind] === 'string') return { file: `${shown}${f}`, kind, spec: e[kind] as string, ...(typeof e.name === 'string' ? { name: e.name } : {}) };
      }
      throw new EngineError('load', `${shown}${f}: packages[${i}] needs one of local:, package:, git:, tarball:`);
    });
  }
  return [];
}

/** Names `dbt deps` recorded in package-lock.yml, by spec. */
function lockedNames(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const f = join(root, 'package-lock.yml');
  if (!existsSync(f)) return out;
  try {
    const doc = parseYaml(readFileSync(f, 'utf8')) as { packages?: Record<string, unknown>[] } | null;
    for (const e of doc?.packages ?? []) {
      const spec = e.package ?? e.git ?? e.tarball ?? e.private;
      if (typeof spec === 'string' && typeof e.name === 'string') out.set(spec, e.name);
    }
  } catch {
    // A lock file we cannot read only loses the recorded names; matching by name still works.
  }
  return out;
}

/** The name a hub / git package is likely installed under: `dbt-labs/dbt_utils` → dbt_utils, `…/dbt-audit-helper.git` → dbt_audit_helper. */
const guessName = (spec: string) =>
  spec
    .replace(/[#?].*$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '')
    .split(/[/:]/)
    .pop()!
    .replace(/-/g, '_')
    .toLowerCase();

export function resolvePackages(root: string, logger: Logger): DbtPackage[] {
  const installDir = join(root, 'dbt_packages');
  const installed = new Map<string, DbtPackage>();
  if (existsSync(installDir)) {
    for (const d of readdirSync(installDir).sort()) {
      if (d.startsWith('.')) continue;
      const dir = join(installDir, d);
      const name = projectName(dir);
      if (name === undefined) continue;
      installed.set(name, { name, dir, label: `dbt_packages/${d}` });
    }
  }
  const locked = lockedNames(root);
  const out = new Map<string, DbtPackage>();
  const visit = (dir: string, shown: string) => {
    for (const d of declaredPackages(dir, shown)) {
      let pkg: DbtPackage | undefined;
      if (d.kind === 'local') {
        const abs = resolve(dir, d.spec);
        const name = projectName(abs);
        // dbt deps links a local package into dbt_packages/ too; either place counts.
        pkg = name !== undefined ? { name, dir: abs, label: d.spec } : [...installed.values()].find((p) => p.dir.endsWith(`/${d.spec.split('/').filter(Boolean).pop()}`));
        if (pkg === undefined) throw new EngineError('load', `${d.file}: local package '${d.spec}' not found: ${abs} has no dbt_project.yml`);
      } else {
        const want = d.name ?? locked.get(d.spec) ?? guessName(d.spec);
        pkg = installed.get(want) ?? [...installed.values()].find((p) => p.name.toLowerCase() === want || want.endsWith(`_${p.name.toLowerCase()}`));
        if (pkg === undefined) {
          throw new EngineError('load', `${d.file}: package '${d.spec}' is not installed under dbt_packages/ (looked for a package named '${want}'); run \`dbt deps\` to install it`);
        }
      }
      if (out.has(pkg.name)) continue;
      out.set(pkg.name, pkg);
      visit(pkg.dir, `${pkg.label}/`);
    }
  };
  visit(root, '');
  // dbt loads every project under dbt_packages/, declared or not.
  for (const p of installed.values()) {
    if (out.has(p.name)) continue;
    logger.log('debug', `${p.label}: installed but not declared in packages.yml; loaded as dbt does`);
    out.set(p.name, p);
  }
  const own = projectName(root);
  if (own !== undefined) out.delete(own);
  return [...out.values()];
}
