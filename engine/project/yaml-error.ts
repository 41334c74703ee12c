/**
 * The one-line detail of a YAML parse error for `could not parse config
 * file: <detail>` and `could not parse YAML frontmatter: <detail>`: the
 * yaml library appends a code frame after the first line, which would turn
 * the single `fatal:` line into a block of source text.
 */
export function yamlErrorDetail(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? '').replace(/:\s*$/, '');
}
