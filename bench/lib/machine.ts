/** The machine a bench run ran on, for results.json and the table in docs/performance.md. */
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
