/**
 * A Gantt chart of a build step's nodes as inline SVG, drawn on the server:
 * one row per node (in start order), a bar from its start to its end on the
 * step's time line, coloured by status, with the thread that ran it. Every
 * name goes through `escapeXml` and colours are presentation attributes, so
 * the console's Content-Security-Policy (no inline styles) holds.
 */
import { escapeXml, STATUS_FILL, STATUS_STROKE } from '../../../engine/lineage/render-lineage.js';
import { axisTicks, secondsLabel } from './axis.js';

export interface GanttBar {
  readonly name: string;
  readonly status: string;
  /** Seconds. */
  readonly duration: number;
  /** Start after the time line's origin, ms; absent when the node never ran. */
  readonly startMs?: number;
  readonly thread: number | null;
}

const LABEL_W = 250;
const THREAD_W = 56;
const PLOT_W = 640;
const ROW_H = 22;
const TOP = 26;
const RIGHT = 16;

const r1 = (n: number) => Math.round(n * 10) / 10;
const fill = (status: string) => STATUS_FILL[status as keyof typeof STATUS_FILL] ?? STATUS_FILL.none;
const stroke = (status: string) => STATUS_STROKE[status as keyof typeof STATUS_STROKE] ?? STATUS_STROKE.none;
const clip = (s: string, n: number) => (s.length > n ? `…${s.slice(s.length - n + 1)}` : s);

export function ganttSvg(bars: readonly GanttBar[], lengthMs: number): string {
  const span = Math.max(lengthMs, 1);
  const x0 = LABEL_W + THREAD_W;
  const width = x0 + PLOT_W + RIGHT;
  const height = TOP + bars.length * ROW_H + 8;
  const scale = PLOT_W / span;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="gantt" role="img" aria-label="Gantt chart of the build's nodes" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<text x="${LABEL_W + THREAD_W / 2}" y="14" text-anchor="middle" fill="#6b7280">thread</text>`,
  ];
  for (const t of axisTicks(span)) {
    const x = r1(x0 + t * scale);
    out.push(`<line x1="${x}" y1="${TOP - 6}" x2="${x}" y2="${height - 4}" stroke="#e5e7eb"/>`, `<text class="tick" x="${x}" y="14" text-anchor="${t === 0 ? 'start' : 'middle'}" fill="#6b7280">${secondsLabel(t)}</text>`);
  }
  bars.forEach((b, i) => {
    const y = TOP + i * ROW_H;
    const label = `${b.name} — ${b.status}${b.startMs !== undefined ? `, ${b.duration.toFixed(3)} s from +${(b.startMs / 1000).toFixed(3)} s` : ''}${b.thread !== null ? `, thread ${b.thread}` : ''}`;
    out.push(`<g class="bar" data-name="${escapeXml(b.name)}" data-status="${escapeXml(b.status)}" data-thread="${b.thread ?? ''}"${b.startMs !== undefined ? ` data-start-ms="${Math.round(b.startMs)}" data-duration-ms="${Math.round(b.duration * 1000)}"` : ''}><title>${escapeXml(label)}</title>`);
    if (i % 2 === 1) out.push(`<rect x="0" y="${y}" width="${width}" height="${ROW_H}" fill="#f8fafc"/>`);
    out.push(`<text x="${LABEL_W - 8}" y="${y + 15}" text-anchor="end" font-family="ui-monospace, monospace" fill="#111827">${escapeXml(clip(b.name, 34))}</text>`);
    out.push(`<text x="${LABEL_W + THREAD_W / 2}" y="${y + 15}" text-anchor="middle" fill="#6b7280">${b.thread ?? '—'}</text>`);
    if (b.startMs !== undefined) {
      const x = r1(x0 + b.startMs * scale);
      // A node shorter than a pixel still shows.
      const w = Math.max(2, r1(b.duration * 1000 * scale));
      out.push(`<rect x="${x}" y="${y + 4}" width="${w}" height="${ROW_H - 8}" rx="3" fill="${fill(b.status)}" stroke="${stroke(b.status)}" stroke-width="1.5"/>`);
    } else {
      out.push(`<text x="${x0 + 4}" y="${y + 15}" fill="#71717a">${escapeXml(b.status === 'skipped' ? 'skipped (not run)' : 'no start time recorded')}</text>`);
    }
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('');
}
