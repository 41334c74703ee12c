/** Job files: classification, validation and the typed models runners consume. */
export { classifyJobFile, isSqlName, isYamlName, type Classification } from './classify.js';
export { validateJobFile, type JobFile, type JobFileValidation, type ValidateOptions } from './validate-job-file.js';
export { JOB_KINDS, type JobFileContext, type JobKind } from './job-file-context.js';
export { formatPath, type PathSeg, type Problem } from './problem.js';
export type { EnvValue } from './fields.js';
export * from './replication-model.js';
export * from './pipeline-model.js';
export { MONITOR_METRICS, monitorSettingsFor, type MonitorFile, type MonitorMetric, type MonitorObject, type MonitorSchemata, type MonitorSettings } from './monitor.js';
export { connectionDeclarations, splitQueryStatements, type ConnectionDeclaration, type QueryFile, type QueryStatement } from './query-file.js';
export {
  EXPRESSION_FUNCTIONS, EXPRESSION_SCOPES, ExpressionError, MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_LENGTH, parseExpression,
  type BinaryOp, type Expr,
} from './expression.js';
export { hasTemplate, isTemplateExpression, templateParts, type TemplatePart } from './template.js';
export { parseJobDuration } from './job-duration.js';
export { fileRefPath, isProjectFileName } from './file-ref.js';
