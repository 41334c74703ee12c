/** What every benchmark suite gets from bench/run.ts. */
import type { BenchDatabase } from './bench-database.js';

export interface SuiteContext {
  /** `--quick`: smaller inputs and fewer repetitions (the whole run within a minute). */
  readonly quick: boolean;
  /** Scratch directory for generated projects and DuckDB files (removed at the end). */
  readonly work: string;
  readonly db: BenchDatabase;
  /** Environment for spawned CLIs: an empty SERVICE_HOME_DIR (no host connections), JSON logs. */
  readonly cliEnv: Readonly<Record<string, string>>;
  /** `--profile`: directory for extra `node --cpu-prof` runs (not the timed ones). */
  readonly profileDir?: string;
  /** Progress line on stderr. */
  progress(message: string): void;
}
