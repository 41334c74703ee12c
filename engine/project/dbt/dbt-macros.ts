/**
 * The macro text every dbt template renders after: installed packages'
 * macros (`dbt_packages/<name>/`), then the project's macro files, then
 * `{% test %}` blocks (as macros named `test_<name>`). Each package is also
 * reachable under its namespace (`dbt_utils.star(...)`). A package listed in
 * packages.yml that is not installed fails, saying to install it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml } from '../../yaml-lib.js';
import { EngineError } from '../../errors.js';
import { markMacroFile } from '../../template/macro-files.js';
import type { Logger } from '../../log.js';
import { silentLogger } from './silent-logger.js';
import type { DbtFile } from './dbt-files.js';
import { findDbtFiles } from './dbt-files.js';
import { loadDbtProjectFile } from './dbt-project-file.js';

const MACRO_NAME = /\{%-?\s*(?:macro|test)\s+([A-Za-z_][A-Za-z0-9_]*)/g;

/** dbt block tags nunjucks does not know, made into what they mean here. */
export function macroText(file: string, text: string): string {
  if (/\{%-?\s*materialization\b/.test(text)) throw new EngineError('load', `${file}: custom materializations are not supported by service build`);
  return text
    .replace(/\{%-?\s*docs\s[\s\S]*?\{%-?\s*enddocs\s*-?%\}/g, '')
    .replace(/\{%(-?)\s*test\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/g, '{%$1 macro test_$2(')
    .replace(/\{%(-?)\s*endtest\s*(-?)%\}/g, '{%$1 endmacro $2%}');
}

function packageNames(root: string): string[] {
  for (const f of ['packages.yml', 'dependencies.yml']) {
    const p = join(root, f);
    if (!existsSync(p)) continue;
    const doc = parseYaml(readFileSync(p, 'utf8')) as { packages?: Record<string, unknown>[] } | null;
    return (doc?.packages ?? []).map((e) => String(e.package ?? e.git ?? e.local ?? e.tarball ?? ''));
  }
  return [];
}

export interface MacroSet {
  readonly prefix: string;
  /** Macro names defined by the project (not packages). */
  readonly projectMacros: ReadonlySet<string>;
  /** Package name → its macro names: `{{ dbt_utils.star(...) }}` calls the package's macro. */
  readonly namespaces: ReadonlyMap<string, readonly string[]>;
}

export function loadMacros(root: string, macros: readonly DbtFile[], testFiles: readonly DbtFile[], logger: Logger): MacroSet {
  const pkgDir = join(root, 'dbt_packages');
  const installed = existsSync(pkgDir) ? readdirSync(pkgDir).filter((n) => !n.startsWith('.')) : [];
  for (const declared of packageNames(root)) {
    const short = declared.replace(/\.git$/, '').split('/').pop()!.replace(/-/g, '_').toLowerCase();
    if (!installed.some((i) => i.toLowerCase() === short || i.toLowerCase().replace(/-/g, '_') === short)) {
      throw new EngineError('load', `package '${declared}' is listed in packages.yml but not installed under dbt_packages/; install it with \`dbt deps\``);
    }
  }
  const parts: string[] = [];
  const namespaces = new Map<string, string[]>();
  for (const pkg of installed.sort()) {
    const dir = join(pkgDir, pkg);
    if (!existsSync(join(dir, 'dbt_project.yml'))) continue;
    const pf = loadDbtProjectFile(dir, silentLogger);
    const files = findDbtFiles(dir, { ...pf, seedPaths: [], testPaths: [], snapshotPaths: [] }, silentLogger);
    // Only a package's macros and tests are used; its own models would be silently missing otherwise.
    if (files.models.length > 0) logger.log('warn', `dbt_packages/${pkg}: the package's ${files.models.length} model(s) are not built (only its macros and generic tests are loaded)`);
    const names: string[] = [];
    for (const f of files.macros) {
      const text = macroText(`dbt_packages/${pkg}/${f.file}`, readFileSync(f.abs, 'utf8'));
      names.push(...[...text.matchAll(MACRO_NAME)].map((m) => m[1]!));
      parts.push(markMacroFile(`dbt_packages/${pkg}/${f.file}`, text));
    }
    namespaces.set(pf.name, names);
  }
  const projectMacros = new Set<string>();
  for (const f of [...macros, ...testFiles]) {
    const raw = readFileSync(f.abs, 'utf8');
    if (testFiles.includes(f) && !/\{%-?\s*test\s/.test(raw)) continue; // a singular test
    const text = macroText(f.file, raw);
    for (const m of text.matchAll(MACRO_NAME)) projectMacros.add(m[1]!);
    parts.push(markMacroFile(f.file, text));
  }
  return { prefix: parts.join('\n'), projectMacros, namespaces };
}
