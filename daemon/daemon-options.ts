/** What `service serve` starts a daemon with (cli/daemon-flags.ts reads them from the command line). */
export interface DaemonFlags {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly state: string;
  readonly maxRunning: number;
  readonly gracePeriodMs: number;
  readonly allowCommandSteps: boolean;
}
