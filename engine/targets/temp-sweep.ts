/**
 * Temporary tables of an execution are recognisable by name: they are
 * `_service_tmp_<model or stream>_<run id>` (engine/targets/relation.ts) and
 * an execution's run ids derive from its id — `<last 6 of exec id><n>` for
 * replication stream n (`…s` for its staging table), `<last 6>b` for its
 * builds. After a crash, the restarted daemon drops the temp tables of the
 * executions it marks interrupted, and only those: a table of another
 * project's or a live execution never matches.
 */

const execKey = (execId: string): string => execId.slice(-6).toLowerCase();

export const replicationRunId = (execId: string, streamIndex: number): string => `${execKey(execId)}${streamIndex + 1}`;
export const buildRunId = (execId: string): string => `${execKey(execId)}b`;

/** A POSIX regex matching the temp table names of these executions (for `relname ~ $1`). */
export function tempTablePattern(execIds: readonly string[]): string {
  const keys = [...new Set(execIds.map(execKey))].map((k) => k.replace(/[^a-z0-9]/g, ''));
  return `^_service_tmp_.*_(${keys.join('|')})([0-9]+s?|b)$`;
}
