/**
 * A lineage as text: SVG (laid out by layout-lineage.ts), Graphviz DOT and
 * Mermaid. The SVG is the one picture both the CLI (`service build graph`)
 * and the web console show; every name in it goes through `escapeXml`, and
 * colours are presentation attributes (no style element or attribute), so
 * the page's Content-Security-Policy needs no inline styles for it.
 */
import type { LineageGraph, LineageStatus } from './lineage-graph.js';
import type { LineageLayout } from './layout-lineage.js';

export const STATUS_FILL: Readonly<Record<LineageStatus | 'none', string>> = {
  success: '#d3f2dc',
  error: '#f8c9c4',
  skipped: '#e4e4e7',
  none: '#ffffff',
};
export const STATUS_STROKE: Readonly<Record<LineageStatus | 'none', string>> = {
  success: '#1f8a3b',
  error: '#c0281b',
  skipped: '#71717a',
  none: '#4b5563',
};

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface SvgOptions {
  /** A link per node (the console's node page); none on the CLI. */
  readonly href?: (name: string) => string;
  /** Drawn size over laid-out size (the console's zoom; the viewBox keeps the drawing); `'fit'`: as wide as its box. Default 1. */
  readonly scale?: number | 'fit';
}

const r1 = (n: number) => Math.round(n * 10) / 10;

export function lineageSvg(l: LineageLayout, options: SvgOptions = {}): string {
  const out: string[] = [];
  const scale = options.scale ?? 1;
  const size = scale === 'fit' ? 'width="100%"' : `width="${r1(l.width * scale)}" height="${r1(l.height * scale)}"`;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="lineage" role="img" aria-label="lineage graph" ${size} viewBox="0 0 ${l.width} ${l.height}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#6b7280"/></marker></defs>',
  );
  for (const e of l.edges) {
    const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${r1(p.x)},${r1(p.y)}`).join('');
    out.push(`<path class="edge" data-from="${escapeXml(e.from)}" data-to="${escapeXml(e.to)}" d="${d}" fill="none" stroke="#6b7280" stroke-width="1.4" marker-end="url(#arrow)"/>`);
  }
  for (const n of l.nodes) {
    const status = n.status ?? 'none';
    const box =
      `<g class="node" data-name="${escapeXml(n.name)}" data-kind="${n.kind}" data-status="${status}">` +
      `<title>${escapeXml(`${n.fullName} (${n.kind}${n.kind === 'model' ? `, ${n.mode}` : ''}${n.status ? `, last run ${n.status}` : ''})`)}</title>` +
      `<rect x="${r1(n.x - n.width / 2)}" y="${r1(n.y - n.height / 2)}" width="${n.width}" height="${n.height}" rx="${n.kind === 'seed' ? 2 : 8}" fill="${STATUS_FILL[status]}" stroke="${STATUS_STROKE[status]}" stroke-width="${status === 'none' ? 1 : 2}"/>` +
      `<text x="${r1(n.x)}" y="${r1(n.y + 4.5)}" text-anchor="middle" font-family="ui-monospace, monospace" font-size="12.5" fill="#111827">${escapeXml(n.name)}</text></g>`;
    out.push(options.href ? `<a href="${escapeXml(options.href(n.name))}">${box}</a>` : box);
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

const dotId = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;

export function lineageDot(g: LineageGraph): string {
  const lines = ['digraph lineage {', '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="monospace"];'];
  for (const n of g.nodes) {
    const status = n.status ?? 'none';
    lines.push(`  ${dotId(n.name)} [fillcolor="${STATUS_FILL[status]}", color="${STATUS_STROKE[status]}"${n.kind === 'seed' ? ', shape=cylinder' : ''}];`);
  }
  for (const e of g.edges) lines.push(`  ${dotId(e.from)} -> ${dotId(e.to)};`);
  lines.push('}');
  return lines.join('\n') + '\n';
}

export function lineageMermaid(g: LineageGraph): string {
  // Mermaid ids must be plain; the names go in quoted labels.
  const id = new Map(g.nodes.map((n, i) => [n.name, `n${i}`]));
  const label = (s: string) => `"${s.replace(/"/g, '#quot;')}"`;
  const lines = ['flowchart LR'];
  for (const n of g.nodes) lines.push(`  ${id.get(n.name)}${n.kind === 'seed' ? `[(${label(n.name)})]` : `[${label(n.name)}]`}`);
  for (const e of g.edges) lines.push(`  ${id.get(e.from)} --> ${id.get(e.to)}`);
  for (const s of ['success', 'error', 'skipped'] as const) {
    const members = g.nodes.filter((n) => n.status === s).map((n) => id.get(n.name));
    if (members.length > 0) lines.push(`  classDef ${s} fill:${STATUS_FILL[s]},stroke:${STATUS_STROKE[s]}`, `  class ${members.join(',')} ${s}`);
  }
  return lines.join('\n') + '\n';
}
