/**
 * dbt models often write `{% config(...) %}`, which Jinja parses as an unknown
 * tag. Before rendering it becomes the expression `{{ config(...) }}`,
 * keeping `-` whitespace control on either side. The arguments are matched up to the first `)`, so they must not
 * contain one.
 */

const CONFIG_BLOCK = /\{%(-?)\s*config\s*\(([^)]*)\)\s*(-?)%\}/g;

/** Rewrites every `{% config(...) %}` / `{%- config(...) -%}` to `{{ config(...) }}` / `{{- config(...) -}}`. */
export function rewriteConfigBlocks(src: string): string {
  if (!src.includes('config')) return src;
  return src.replace(CONFIG_BLOCK, (_m, open: string, args: string, close: string) => `{{${open} config(${args}) ${close}}}`);
}
