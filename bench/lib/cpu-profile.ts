/**
 * Reads V8 `.cpuprofile` files (`node --cpu-prof`) and answers "where does
 * the time go": self time per function (file:line), and self time per
 * module group (our engine/actors/cli code, each dependency, node internals,
 * GC, idle). Usage: node --import tsx bench/lib/cpu-profile.ts <file|dir> [top=20]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface HotSpot {
  readonly name: string;
  readonly selfMs: number;
  readonly share: number;
}

export interface ProfileSummary {
  readonly file: string;
  /** Profile wall span in ms. */
  readonly spanMs: number;
  /** Sampled time not idle (ms). */
  readonly busyMs: number;
  readonly functions: readonly HotSpot[];
  readonly groups: readonly HotSpot[];
}

/** Where a script URL belongs: `engine/…` style for ours, the package name for dependencies. */
export function groupOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return '(gc)';
  // A Piscina worker blocked in Atomics.wait between tasks: sampled, but not using the CPU.
  if (functionName === 'atomicsWaitLoop' && url.includes('/piscina/')) return '(idle)';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  if (url === '') return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(?:dist\/)?(engine|actors|cli|http|bench)\/(.*)$/.exec(url);
  if (m) return `${m[1]}/${m[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/');

export function summarize(file: string, top = 20): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  const fns = new Map<string, number>();
  const groups = new Map<string, number>();
  let busy = 0;
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + t);
    if (group === '(idle)') continue;
    busy += t;
    const key = `${functionName || '(anonymous)'} ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + t);
  }
  const rank = (m: Map<string, number>, total: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, selfMs]) => ({ name, selfMs, share: total > 0 ? selfMs / total : 0 }));
  return { file, spanMs: (p.endTime - p.startTime) / 1000, busyMs: busy, functions: rank(fns, busy), groups: rank(groups, busy) };
}

export function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => join(path, f));
}

/** `node --cpu-prof` names a file CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread. */
export function threadOf(file: string): string {
  const m = /\.(\d+)\.\d+\.cpuprofile$/.exec(file);
  return m === null ? '' : m[1] === '0' ? 'main thread' : `worker thread ${m[1]}`;
}

export function formatSummary(s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const thread = threadOf(s.file);
  const lines = [`${s.file}${thread ? ` (${thread})` : ''}: span ${s.spanMs.toFixed(0)} ms, busy ${s.busyMs.toFixed(0)} ms`, '  by module group (self time, share of busy):'];
  for (const g of s.groups) if (g.name !== '(idle)') lines.push(`    ${g.selfMs.toFixed(0).padStart(7)} ms ${pct(g.share)}  ${g.name}`);
  lines.push('  by function:');
  for (const f of s.functions) lines.push(`    ${f.selfMs.toFixed(0).padStart(7)} ms ${pct(f.share)}  ${f.name}`);
  return lines.join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write('usage: cpu-profile.ts <file.cpuprofile|dir> [top=20]\n');
    process.exit(2);
  }
  for (const f of profileFiles(path)) process.stdout.write(formatSummary(summarize(f, Number(process.argv[3] ?? 20))) + '\n\n');
}
