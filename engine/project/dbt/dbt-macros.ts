/**
 * The macros of a dbt project: its own macro files and `{% test %}` blocks
 * (as macros named `test_<name>`), which every template renders after; and
 * each namespace of macros — installed packages (packages.ts) and `dbt`, our
 * built-in macros — rendered as scopes of their own (macro-scopes.ts).
 */
import { readFileSync } from 'node:fs';
import { EngineError } from '../../errors.js';
import { markMacroFile } from '../../template/macro-files.js';
import type { Logger } from '../../log.js';
import { silentLogger } from './silent-logger.js';
import type { DbtFile } from './dbt-files.js';
import { findDbtFiles } from './dbt-files.js';
import { loadDbtProjectFile } from './dbt-project-file.js';
import { BUILTIN_MACROS } from './dbt-builtins/index.js';
import { BUILTIN_NS, type DispatchConfig, type MacroSet } from './dbt-render-types.js';
import { resolvePackages } from './packages.js';

const MACRO_NAME = /\{%-?\s*(?:macro|test)\s+([A-Za-z_][A-Za-z0-9_]*)/g;

/** dbt block tags nunjucks does not know, made into what they mean here. */
export function macroText(file: string, text: string): string {
  if (/\{%-?\s*materialization\b/.test(text)) throw new EngineError('load', `${file}: custom materializations are not supported by service build`);
  return text
    .replace(/\{%-?\s*docs\s[\s\S]*?\{%-?\s*enddocs\s*-?%\}/g, '')
    .replace(/\{%(-?)\s*test\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/g, '{%$1 macro test_$2(')
    .replace(/\{%(-?)\s*endtest\s*(-?)%\}/g, '{%$1 endmacro $2%}');
}


export interface MacroOptions {
  readonly projectName: string;
  readonly dispatch?: DispatchConfig;
}

const namesIn = (text: string) => [...text.matchAll(MACRO_NAME)].map((m) => m[1]!);

export function loadMacros(root: string, macros: readonly DbtFile[], testFiles: readonly DbtFile[], logger: Logger, opts: MacroOptions = { projectName: '' }): MacroSet {
  const namespaces = new Map<string, string[]>();
  const scopeText = new Map<string, string>();
  const scopeLabel = new Map<string, string>();
  for (const pkg of resolvePackages(root, logger)) {
    const pf = loadDbtProjectFile(pkg.dir, silentLogger);
    const files = findDbtFiles(pkg.dir, { ...pf, seedPaths: [], testPaths: [], snapshotPaths: [] }, silentLogger);
    // Only a package's macros and tests are used; its own models would be silently missing otherwise.
    if (files.models.length > 0) logger.log('warn', `${pkg.label}: the package's ${files.models.length} model(s) are not built (only its macros and generic tests are loaded)`);
    const texts = files.macros.map((f) => macroText(`${pkg.label}/${f.file}`, readFileSync(f.abs, 'utf8')));
    namespaces.set(pf.name, texts.flatMap(namesIn));
    scopeText.set(pf.name, texts.map((t, i) => markMacroFile(`${pkg.label}/${files.macros[i]!.file}`, t)).join('\n'));
    scopeLabel.set(pf.name, pkg.label);
  }
  namespaces.set(BUILTIN_NS, namesIn(BUILTIN_MACROS));
  scopeText.set(BUILTIN_NS, markMacroFile('(dbt built-in macros)', BUILTIN_MACROS));
  scopeLabel.set(BUILTIN_NS, "dbt's built-in macros");
  const parts: string[] = [];
  const projectMacros = new Set<string>();
  for (const f of [...macros, ...testFiles]) {
    const raw = readFileSync(f.abs, 'utf8');
    if (testFiles.includes(f) && !/\{%-?\s*test\s/.test(raw)) continue; // a singular test
    const text = macroText(f.file, raw);
    for (const n of namesIn(text)) projectMacros.add(n);
    parts.push(markMacroFile(f.file, text));
  }
  return { prefix: parts.join('\n'), projectName: opts.projectName, projectMacros, namespaces, scopeText, scopeLabel, dispatch: opts.dispatch ?? new Map() };
}
