/**
 * What the operator commands `service token list|revoke` and `service
 * project delete` (cli/operator.ts) read and remove, as SQL shared by both
 * backends. Each statement takes the project id as its only parameter, `$1`.
 */
import { EngineError } from '../errors.js';
import type { TokenInfo } from './store.js';

/** A token's public id: the first 12 hex digits of its SHA-256 digest (not enough to authenticate). */
export const TOKEN_ID_LENGTH = 12;

type Row = Record<string, unknown>;

export const TOKEN_LIST_SQL = 'SELECT digest, project_id, label, created FROM tokens ORDER BY created, digest';

export function tokenFromRow(r: Row): TokenInfo {
  return { id: String(r.digest).slice(0, TOKEN_ID_LENGTH), digest: String(r.digest), project_id: String(r.project_id), label: String(r.label), created: String(r.created) };
}

export const PROJECT_ACTIVE_SQL = "SELECT COUNT(*) AS n FROM executions WHERE project_id = $1 AND status IN ('queued', 'running')";

export const projectHasActive = (id: string, n: number) =>
  new EngineError('conflict', `project ${id} has ${n} queued or running execution${n === 1 ? '' : 's'}: cancel ${n === 1 ? 'it' : 'them'} first (service execs cancel)`);

const OF_PROJECT = 'exec_id IN (SELECT exec_id FROM executions WHERE project_id = $1)';

/** Children before parents (the foreign keys); the cluster tables exist on PostgreSQL only. */
export function projectDeleteStatements(dialect: 'sqlite' | 'postgres'): string[] {
  return [
    `DELETE FROM task_output WHERE ${OF_PROJECT}`,
    `DELETE FROM step_output WHERE ${OF_PROJECT}`,
    `DELETE FROM tasks WHERE ${OF_PROJECT}`,
    `DELETE FROM steps WHERE ${OF_PROJECT}`,
    ...(dialect === 'postgres' ? ['DELETE FROM schedule_claims WHERE job_id IN (SELECT id FROM jobs WHERE project_id = $1)'] : []),
    'DELETE FROM executions WHERE project_id = $1',
    'DELETE FROM jobs WHERE project_id = $1',
    'DELETE FROM tokens WHERE project_id = $1',
    ...(dialect === 'postgres' ? ['DELETE FROM project_files WHERE project_id = $1', 'DELETE FROM project_trees WHERE project_id = $1'] : []),
    'DELETE FROM projects WHERE id = $1',
  ];
}
