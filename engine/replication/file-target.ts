/**
 * File targets: DuckDB's writers (`COPY … TO`) produce CSV,
 * JSON (an array), JSON lines or Parquet. The output is written beside its
 * final name and renamed into place, so readers never see half a file;
 * `file_max_rows` splits the rows into numbered parts `<stem>_001.<ext>`, ….
 * Both supported modes (full-refresh, truncate) overwrite.
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { TargetOptions } from '../jobs/replication-model.js';
import type { DuckSession } from './duck-session.js';
import type { LoadCount } from './feed.js';
import { extensionOf } from './file-catalog.js';
import type { TargetWrite } from './plan-types.js';
import { sqlString } from './source-query.js';

type FileWrite = Extract<TargetWrite, { kind: 'file' }>;

function copyOptions(write: FileWrite, o: TargetOptions): string {
  const opts: string[] = [`FORMAT ${write.format === 'jsonlines' ? 'json' : write.format}`];
  if (write.format === 'csv') {
    opts.push(`HEADER ${o.header !== false}`);
    if (o.delimiter !== undefined) opts.push(`DELIMITER ${sqlString(o.delimiter)}`);
  }
  if (write.format === 'json') opts.push('ARRAY true');
  if (o.compression === 'gzip') opts.push("COMPRESSION 'gzip'");
  if (o.compression === 'none') opts.push(write.format === 'parquet' ? "COMPRESSION 'uncompressed'" : "COMPRESSION 'none'");
  return opts.join(', ');
}

function splitName(file: string): { stem: string; ext: string } {
  const base = basename(file);
  const m = /^(.*?)((?:\.[A-Za-z0-9]+)?(?:\.(?:gz|gzip|zst))?)$/.exec(base)!;
  return m[1] === '' ? { stem: base, ext: '' } : { stem: m[1]!, ext: m[2]! };
}

const PART = (stem: string, n: number, ext: string) => `${stem}_${String(n).padStart(3, '0')}${ext}`;

/** Writes the rows of `query` (run on `s`) to the target file. */
export async function copyToFile(s: DuckSession, query: string, write: FileWrite, o: TargetOptions, runId: string, log: (line: string) => void): Promise<LoadCount> {
  const dir = dirname(write.path);
  await mkdir(dir, { recursive: true });
  const options = copyOptions(write, o);
  if (o.file_max_rows === undefined) {
    const tmp = join(dir, `.service-${runId}-${basename(write.path)}`);
    try {
      const rows = await s.run(`COPY (\n${query}\n) TO ${sqlString(tmp)} (${options})`);
      await rename(tmp, write.path);
      const bytes = (await stat(write.path)).size;
      log(`wrote ${rows} rows to ${write.relative}`);
      return { rows, bytes };
    } finally {
      await rm(tmp, { force: true });
    }
  }
  const staging = join(dir, `.service-${runId}-parts`);
  const { stem, ext: written } = splitName(write.path);
  const ext = written === '' ? `.${extensionOf(write.format)}` : written;
  await rm(staging, { recursive: true, force: true });
  try {
    const parts = `SELECT *, (row_number() OVER () - 1) // ${o.file_max_rows} AS "__service_part" FROM (\n${query}\n) AS _q`;
    const rows = await s.run(`COPY (${parts}) TO ${sqlString(staging)} (${options}, PARTITION_BY ("__service_part"), FILENAME_PATTERN 'part_{i}')`);
    for (const old of await readdir(dir)) {
      if (old === basename(write.path) || (old.startsWith(`${stem}_`) && old.endsWith(ext) && /^\d{3,}$/.test(old.slice(stem.length + 1, old.length - ext.length)))) {
        await rm(join(dir, old), { force: true });
      }
    }
    const groups = (await readdir(staging)).map((d) => ({ d, k: Number(d.split('=')[1]) })).sort((a, b) => a.k - b.k);
    let bytes = 0;
    let n = 0;
    for (const g of groups) {
      for (const f of (await readdir(join(staging, g.d))).sort()) {
        const dest = join(dir, PART(stem, ++n, ext));
        await rename(join(staging, g.d, f), dest);
        bytes += (await stat(dest)).size;
      }
    }
    log(`wrote ${rows} rows to ${n} part(s) ${PART(stem, 1, ext)}…`);
    return { rows, bytes };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
