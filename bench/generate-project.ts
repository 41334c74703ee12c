/**
 * Generates a synthetic build project for benchmarks: N models in 10 folders
 * (schemas), each selecting from one or two earlier models through ref(),
 * a bare prod name or `@name`, with front-matter on every third model and a
 * seed at the root. Usage:
 *   node --import tsx bench/generate-project.ts <dir> [models=10000]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function generateProject(dir: string, models: number): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'service_build.yml'), 'target: BENCH\nvars:\n  limit_n: 100\n');
  writeFileSync(join(dir, 'seed_base.csv'), 'id,amount\n1,10\n2,20\n');
  writeFileSync(join(dir, 'helpers.macros.sql'), '{% macro double(col) %}({{ col }} * 2){% endmacro %}\n');
  const folders = 10;
  for (let f = 0; f < folders; f++) mkdirSync(join(dir, `layer${f}`), { recursive: true });
  const nameOf = (i: number) => `m${String(i).padStart(5, '0')}`;
  const folderOf = (i: number) => `layer${i % folders}`;
  for (let i = 0; i < models; i++) {
    const parts: string[] = [];
    if (i % 3 === 0) parts.push(`/**\nmode: ${i % 2 === 0 ? 'view' : 'full-refresh'}\ntags: [t${i % 7}]\n**/`);
    let from: string;
    if (i === 0) from = "{{ ref('seed_base') }}";
    else {
      const a = Math.floor((i * 7919) % i);
      const ref = i % 3 === 0 ? `{{ ref('${nameOf(a)}') }}` : i % 3 === 1 ? `${folderOf(a)}.${nameOf(a)}` : `@${nameOf(a)}`;
      from = i > 1 && i % 5 === 0 ? `${ref} a join {{ ref('${nameOf(i - 1)}') }} b on a.id = b.id` : ref;
    }
    parts.push(`select id, {{ double('amount') }} as amount\nfrom ${from}\nlimit {{ limit_n }}\n`);
    writeFileSync(join(dir, folderOf(i), `${nameOf(i)}.sql`), parts.join('\n'));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: generate-project.ts <dir> [models=10000]\n');
    process.exit(2);
  }
  const n = Number(process.argv[3] ?? 10000);
  generateProject(dir, n);
  process.stdout.write(`generated ${n} models in ${dir}\n`);
}
