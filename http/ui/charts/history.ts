/**
 * A run-history chart as inline SVG: one bar per run, oldest on the left,
 * its height the run's duration and its colour the run's status, each bar a
 * link to the execution. The job page draws its last runs with it, a lineage
 * node's page the node's own durations in them. Escaped and without inline
 * styles, like the Gantt chart (gantt.ts).
 */
import { escapeXml } from '../../../engine/lineage/render-lineage.js';
import { axisTicks, secondsLabel } from './axis.js';

export interface HistoryBar {
  readonly execId: string;
  readonly status: string;
  /** Seconds; null while running or when unknown. */
  readonly duration: number | null;
  readonly startTime: string;
  /** Extra line of the tooltip (rows, …). */
  readonly note?: string;
}

/** Status colours of the console's badges (console-css.ts), as fills. */
const FILL: Readonly<Record<string, string>> = {
  success: '#22a04b',
  error: '#d9412f',
  interrupted: '#d9412f',
  warning: '#d99a1e',
  running: '#3b6fe0',
  queued: '#93b4f5',
  cancelled: '#a1a1aa',
  skipped: '#a1a1aa',
};

const LEFT = 56;
const TOP = 10;
const PLOT_W = 700;
const PLOT_H = 120;
const BOTTOM = 22;
/** Widest slot per bar: a few runs do not become slabs. */
const MAX_SLOT = 44;

const r1 = (n: number) => Math.round(n * 10) / 10;

/** `bars` oldest first; `label` names the chart for screen readers. */
export function historySvg(bars: readonly HistoryBar[], label: string): string {
  const max = Math.max(...bars.map((b) => (b.duration ?? 0) * 1000), 1);
  const ticks = axisTicks(max);
  const top = Math.max(max, ticks.at(-1)!);
  const slot = Math.min(MAX_SLOT, PLOT_W / Math.max(bars.length, 1));
  const width = LEFT + PLOT_W + 8;
  const height = TOP + PLOT_H + BOTTOM;
  const y = (ms: number) => r1(TOP + PLOT_H - (ms / top) * PLOT_H);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="history" role="img" aria-label="${escapeXml(label)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
  ];
  for (const t of ticks) {
    out.push(`<line x1="${LEFT - 4}" y1="${y(t)}" x2="${width - 4}" y2="${y(t)}" stroke="#e5e7eb"/>`, `<text x="${LEFT - 8}" y="${y(t) + 4}" text-anchor="end" fill="#6b7280">${secondsLabel(t)}</text>`);
  }
  bars.forEach((b, i) => {
    const x = r1(LEFT + i * slot + slot * 0.15);
    const ms = (b.duration ?? 0) * 1000;
    // A run that took no measurable time (or is still running) still gets a visible stub.
    const h = Math.max(3, r1((ms / top) * PLOT_H));
    const tip = `${b.startTime.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} — ${b.status}${b.duration !== null ? `, ${b.duration.toFixed(3)} s` : ''}${b.note ? `, ${b.note}` : ''}`;
    out.push(
      `<a href="/ui/executions/${encodeURIComponent(b.execId)}"><g class="run" data-exec="${escapeXml(b.execId)}" data-status="${escapeXml(b.status)}" data-duration-ms="${Math.round(ms)}"><title>${escapeXml(tip)}</title>`,
      `<rect x="${x}" y="${r1(TOP + PLOT_H - h)}" width="${r1(slot * 0.7)}" height="${h}" rx="2" fill="${FILL[b.status] ?? '#a1a1aa'}"/></g></a>`,
    );
  });
  out.push(`<line x1="${LEFT - 4}" y1="${TOP + PLOT_H}" x2="${width - 4}" y2="${TOP + PLOT_H}" stroke="#9ca3af"/>`);
  if (bars.length > 0) {
    out.push(`<text x="${LEFT}" y="${height - 6}" fill="#6b7280">oldest</text>`, `<text x="${r1(LEFT + Math.max(bars.length * slot, 120))}" y="${height - 6}" text-anchor="end" fill="#6b7280">newest</text>`);
  }
  out.push('</svg>');
  return out.join('');
}
