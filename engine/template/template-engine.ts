/**
 * The seam between the model compiler and the Jinja implementation (
 * nunjucks behind a `TemplateEngine` interface). The compiler renders every
 * model of a run through one engine; everything model-specific (`ref`, `this`,
 * `is_incremental`, vars, …) arrives in the per-render context.
 *
 * Failures are EngineErrors with code 'compile' and these texts: `could not parse template for model '<n>': <detail>` for syntax
 * errors, `could not compile template for model '<n>': <detail>` for errors
 * while rendering. When a context function throws an EngineError (e.g.
 * `ref('x') not found.`), that error is kept as the `cause`, so the chain reads
 * `could not compile template for model 'a': ref('x') not found.`.
 */

export interface TemplateEngine {
  /**
   * Compile once (cache by `cacheKey`; compiled templates are reused within a
   * run), then render with `context`. `modelName` names the model in error
   * messages and defaults to `cacheKey`. If `source` differs from the text
   * cached under `cacheKey`, it is compiled afresh and replaces the entry.
   *
   * `prefix` (macro files) holds the macro files the template sees, joined;
   * each file marked with `markMacroFile` (macro-files.ts) is parsed on its
   * own, so a syntax error names that file and its line. Only the files'
   * macros are used — text around them is never rendered, as in dbt — and
   * they are compiled once for every template that shares the prefix.
   */
  render(cacheKey: string, source: string, context: Readonly<Record<string, unknown>>, modelName?: string, prefix?: string): string;
}
