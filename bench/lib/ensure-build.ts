/**
 * The end-to-end benchmarks spawn the compiled CLI (bin/service.js →
 * dist/). A fresh clone has dist/ from `npm ci` (the prepare script); after
 * editing sources it may be stale, and timing stale code would be wrong, so
 * the bench rebuilds when any source is newer than its compiled file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './spawn-timed.js';

const SOURCE_DIRS = ['engine', 'actors', 'cli', 'http'];

function staleSource(): string | undefined {
  for (const dir of SOURCE_DIRS) {
    const abs = join(REPO, dir);
    if (!existsSync(abs)) continue;
    for (const rel of readdirSync(abs, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || rel.endsWith('.d.ts')) continue;
      const src = join(abs, rel);
      const out = join(REPO, 'dist', dir, rel.replace(/\.ts$/, '.js'));
      if (!existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs) return join(dir, rel);
    }
  }
  return undefined;
}

/** Rebuilds dist/ when stale; returns what triggered the rebuild, if anything. BENCH_CLI (an A/B build) skips it. */
export function ensureBuild(progress: (m: string) => void): string | undefined {
  if (process.env.BENCH_CLI) return undefined;
  const stale = staleSource();
  if (stale === undefined) return undefined;
  progress(`dist/ is older than ${stale}: npm run build`);
  try {
    execFileSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(REPO, 'tsconfig.build.json')], { cwd: REPO, stdio: 'inherit' });
  } catch (err) {
    // tsc still emits on type errors; only a build that left no CLI behind is fatal.
    if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) throw err;
    progress('warning: tsc reported errors (see above); dist/ was emitted and is benchmarked as is');
  }
  return stale;
}
