/**
 * What job-file validation may ask of the world: whether a
 * project file exists and what kind a named connection has. Injected, so the
 * validators stay pure and the daemon decides how names map to its tree.
 */
import type { ConnectionKind } from '../connections/connection.js';

export type JobKind = 'replication' | 'pipeline' | 'monitor' | 'query';

export const JOB_KINDS: readonly JobKind[] = ['replication', 'pipeline', 'monitor', 'query'];

export interface JobFileContext {
  /** True when the project file or directory `path` (a project file name, already shape-checked) exists. */
  fileExists(path: string): boolean;
  /** Kind of a connection defined now; undefined = not defined at save time (kind checks then wait for the run). */
  connectionKind(name: string): ConnectionKind | undefined;
  /** Content of a project file, when the caller can read it; enables "is not a replication file" checks. */
  readFile?(path: string): string | undefined;
}
