// The floor of `build list` / `build compile` (bench suite 1): read every
// model file of a project and render each template once, in a plain loop —
// no front-matter, DAG, naming, rewriting or output. Plain JavaScript, so it
// starts like the compiled CLI does (no TypeScript loader).
// Usage: node bench/floor/render-floor.mjs <dir> [vars-json] [ours|stock]
//   ours  (default) the template engine we ship (dist/engine/template), the
//         project's macro files compiled once and shared by every model, as
//         a build does;
//   stock stock nunjucks, the macro files' text put before each model's.
// Macro files: `*.macros.sql`, or any .sql under a `macros/` folder.
// Prints {"files": n, "loopMs": ms} on stdout.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const started = performance.now();
const dir = process.argv[2];
const vars = JSON.parse(process.argv[3] ?? '{}');
const which = process.argv[4] ?? 'ours';
const isMacroFile = (f) => f.endsWith('.macros.sql') || f.startsWith('macros/') || f.includes('/macros/');
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.sql') && !f.startsWith('dbt_packages/') && !f.startsWith('target/') && !f.startsWith('.service/'))
  .sort();
const macroFiles = files.filter(isMacroFile);

let render;
if (which === 'stock') {
  const { default: nunjucks } = await import('nunjucks');
  const env = new nunjucks.Environment([], { autoescape: false });
  const macros = macroFiles.map((f) => readFileSync(join(dir, f), 'utf8')).join('');
  render = (file, text, context) => new nunjucks.Template(macros + text, env, file, true).render(context);
} else {
  const { createNunjucksEngine } = await import('../../dist/engine/template/nunjucks-engine.js');
  const { markMacroFile } = await import('../../dist/engine/template/macro-files.js');
  const engine = createNunjucksEngine();
  const prefix = macroFiles.map((f) => markMacroFile(f, readFileSync(join(dir, f), 'utf8'))).join('');
  render = (file, text, context, name) => engine.render(file, text, context, name, prefix);
}

let rendered = 0;
for (const file of files) {
  if (isMacroFile(file)) continue;
  const name = file.slice(file.lastIndexOf('/') + 1, -4);
  const context = {
    ...vars,
    ref: (n) => n,
    config: () => '',
    is_incremental: () => false,
    incremental_where_cond: () => '1=1',
    this: name,
  };
  const text = readFileSync(join(dir, file), 'utf8');
  rendered += render(file, text, context, name).length > 0 ? 1 : 0;
}
process.stdout.write(JSON.stringify({ files: rendered, loopMs: performance.now() - started }) + '\n');
