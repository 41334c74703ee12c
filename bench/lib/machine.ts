/** The machine a bench run ran on, for results.json and the table in docs/performance.md. */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryBytes: number;
  readonly freeMemoryBytes: number;
  readonly os: string;
  readonly node: string;
  /** 1-minute load average when the bench started: other work on the machine skews every figure. */
  readonly loadAverageAtStart: number;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cores: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    os: `${platform()} ${release()}`,
    node: process.version,
    loadAverageAtStart: loadavg()[0]!,
  };
}

export function describeMachine(m: MachineInfo, postgres: string): string {
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  return `${m.cores} cores (${m.cpuModel}), ${gib(m.memoryBytes)} RAM, ${m.os}, Node ${m.node}, PostgreSQL ${postgres}`;
}

/** 1-minute load average now. */
export const loadNow = (): number => loadavg()[0]!;

/**
 * What one minor page fault costs on this machine, in µs: a fresh Node
 * process touches 256 MiB of new memory, one write per 4 KiB page, and
 * divides the time by the minor faults it took (process.resourceUsage).
 * On some VMs a fault costs ten times what it does on bare metal, and a
 * run that allocates much pays it on every new page.
 */
export function pageFaultCostUs(): { readonly usPerFault: number; readonly faults: number } {
  const probe = `
    const bytes = 256 * 1024 * 1024;
    const f0 = process.resourceUsage().minorPageFault;
    const t0 = process.hrtime.bigint();
    const b = Buffer.allocUnsafeSlow(bytes);
    for (let i = 0; i < bytes; i += 4096) b[i] = 1;
    const ns = Number(process.hrtime.bigint() - t0);
    const faults = process.resourceUsage().minorPageFault - f0;
    process.stdout.write(JSON.stringify({ usPerFault: ns / 1000 / faults, faults }));`;
  const best = [0, 1, 2].map(() => JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' })) as { usPerFault: number; faults: number });
  return best.reduce((a, b) => (b.usPerFault < a.usPerFault ? b : a));
}
