// The floor of `build list` / `build compile` (bench suite 1): read every
// model file of a project and render each template once with stock nunjucks
// in a plain loop — no front-matter, DAG, naming, rewriting or output. Plain
// JavaScript, so it starts like the compiled CLI does (no TypeScript loader).
// Usage: node bench/floor/render-floor.mjs <dir> [vars-json]
// Prints {"files": n, "loopMs": ms} on stdout.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import nunjucks from 'nunjucks';

const started = performance.now();
const dir = process.argv[2];
const vars = JSON.parse(process.argv[3] ?? '{}');
const env = new nunjucks.Environment([], { autoescape: false });
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql')).sort();
const macros = files.filter((f) => f.endsWith('.macros.sql')).map((f) => readFileSync(join(dir, f), 'utf8')).join('');
let rendered = 0;
for (const file of files) {
  if (file.endsWith('.macros.sql')) continue;
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
  rendered += new nunjucks.Template(macros + text, env, file, true).render(context).length > 0 ? 1 : 0;
}
process.stdout.write(JSON.stringify({ files: rendered, loopMs: performance.now() - started }) + '\n');
