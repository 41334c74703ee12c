/**
 * Full validation of a job file on save: classify, then
 * check the file as its kind and collect every problem in document order.
 * The typed model is returned only for a file without problems, so runners
 * never see data that failed a check.
 */
import type { Scope } from './fields.js';
import { isSqlName, isYamlName, yamlKind } from './classify.js';
import type { JobFileContext, JobKind } from './job-file-context.js';
import { validateMonitor, type MonitorFile } from './monitor.js';
import type { PipelineFile } from './pipeline-model.js';
import { validatePipeline } from './pipeline-validate.js';
import { ProblemList, lineIndex, type Problem } from './problem.js';
import { connectionDeclarations, validateQueryFile, type QueryFile } from './query-file.js';
import type { ReplicationFile } from './replication-model.js';
import { validateReplication } from './replication-validate.js';
import { parseYaml } from './yaml-tree.js';

export type JobFile = ReplicationFile | PipelineFile | MonitorFile | QueryFile;

export type JobFileValidation =
  | { readonly kind: null; readonly problems: readonly Problem[] }
  | { readonly kind: 'invalid-yaml'; readonly problems: readonly Problem[] }
  | { readonly kind: 'replication'; readonly problems: readonly Problem[]; readonly parsed?: ReplicationFile }
  | { readonly kind: 'pipeline'; readonly problems: readonly Problem[]; readonly parsed?: PipelineFile }
  | { readonly kind: 'monitor'; readonly problems: readonly Problem[]; readonly parsed?: MonitorFile }
  | { readonly kind: 'query'; readonly problems: readonly Problem[]; readonly parsed?: QueryFile };

export interface ValidateOptions {
  /**
   * Validate a YAML file as this kind whatever its content says (e.g. the
   * type of the job that runs it): a top level that is not a mapping, or keys
   * of another kind, then become problems instead of making it a plain file.
   * Query files are recognised by their header only.
   */
  readonly as?: YamlJobKind;
}

type YamlJobKind = Exclude<JobKind, 'query'>;

function result(kind: JobKind, problems: ProblemList, parsed: JobFile): JobFileValidation {
  const list = problems.list();
  return (list.length === 0 ? { kind, problems: list, parsed } : { kind, problems: list }) as JobFileValidation;
}

function validateYaml(text: string, ctx: JobFileContext, as: YamlJobKind | undefined): JobFileValidation {
  const y = parseYaml(text);
  if (y.syntaxProblems.length > 0) return { kind: 'invalid-yaml', problems: y.syntaxProblems };
  const kind = as ?? yamlKind(y.root);
  if (kind === null) return { kind: null, problems: [] };
  const problems = y.structureProblems;
  const s: Scope = { problems, ctx };
  if (y.documentCount > 1) problems.add('', 'multiple YAML documents are not supported', y.secondDocumentOffset);
  const root = y.root?.kind === 'map' ? y.root : undefined;
  if (root === undefined) {
    problems.add('', 'top level must be a mapping', y.root?.offset ?? 0);
    return { kind, problems: problems.list() };
  }
  if (kind === 'replication') return result(kind, problems, validateReplication(s, root));
  if (kind === 'pipeline') return result(kind, problems, validatePipeline(s, root));
  return result(kind, problems, validateMonitor(s, root));
}

/**
 * Classifies `text` as the content of project file `name` and validates it
 * in full. `kind: null` is a plain file (never validated).
 */
export function validateJobFile(name: string, text: string, ctx: JobFileContext, options: ValidateOptions = {}): JobFileValidation {
  if (isYamlName(name)) return validateYaml(text, ctx, options.as);
  if (isSqlName(name) && connectionDeclarations(text).length > 0) {
    const lineOf = lineIndex(text);
    const problems = new ProblemList(lineOf);
    return result('query', problems, validateQueryFile({ problems, ctx }, text, lineOf));
  }
  return { kind: null, problems: [] };
}
