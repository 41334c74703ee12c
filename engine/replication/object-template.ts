/**
 * `object` templates: `{name}` placeholders
 * filled from the stream, the connections and the execution start (UTC).
 * `${NAME}` substitutions are not placeholders (they are resolved before).
 */
import { posix } from 'node:path';

export interface TemplateStream {
  /** Stream key after expansion. */
  readonly name: string;
  /** Database streams; empty for SQL and file streams. */
  readonly schema: string;
  /** Database streams: the table; SQL streams: the key; file streams: the file name without extension. */
  readonly table: string;
  /** File streams: the path under the connection root (a folder without its trailing `/`). */
  readonly filePath?: string;
}

export interface TemplateContext {
  readonly sourceName: string;
  readonly targetName: string;
  readonly targetSchema: string;
  readonly start: Date;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Extension without the dot, ignoring a compression suffix (`a.csv.gz` → `csv`). */
export function fileExtension(path: string): string {
  const base = posix.basename(path).replace(/\.(gz|gzip|zst)$/i, '');
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1) : '';
}

function fileStem(path: string): string {
  const base = posix.basename(path).replace(/\.(gz|gzip|zst)$/i, '');
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

export function templateVariables(stream: TemplateStream, ctx: TemplateContext): Record<string, string> {
  const d = ctx.start;
  const [Y, M, D, H] = [pad(d.getUTCFullYear(), 4), pad(d.getUTCMonth() + 1), pad(d.getUTCDate()), pad(d.getUTCHours())];
  const path = stream.filePath ?? '';
  const dir = posix.dirname(path);
  return {
    stream_schema: stream.schema,
    stream_table: stream.table,
    stream_schema_lower: stream.schema.toLowerCase(),
    stream_schema_upper: stream.schema.toUpperCase(),
    stream_table_lower: stream.table.toLowerCase(),
    stream_table_upper: stream.table.toUpperCase(),
    stream_name: stream.name,
    stream_file_path: path,
    stream_file_name: path === '' ? '' : fileStem(path),
    stream_file_folder: dir === '.' ? '' : dir,
    stream_file_ext: path === '' ? '' : fileExtension(path),
    source_name: ctx.sourceName.toLowerCase(),
    target_name: ctx.targetName.toLowerCase(),
    target_schema: ctx.targetSchema,
    run_timestamp: `${Y}_${M}_${D}_${H}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`,
    YYYY: Y,
    MM: M,
    DD: D,
    HH: H,
  };
}

/** Replaces each known `{name}`; unknown names were rejected when the file was saved. */
export function renderObject(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/(?<!\$)\{([^{}]*)\}/g, (whole, name: string) => (Object.hasOwn(vars, name) ? vars[name]! : whole));
}
