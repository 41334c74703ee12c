/**
 * The console's views: handlebars templates compiled once at start, each
 * rendered inside the layout. Everything goes through handlebars' default
 * escaping (`{{…}}`); no template uses a triple-stash. The only markup that
 * is not a template — the lineage SVG — is built by a renderer that escapes
 * every name itself and is handed over as a SafeString.
 */
import Handlebars from 'handlebars';
import { TEMPLATES } from './templates/index.js';

export interface LayoutData {
  readonly title: string;
  /** Which nav entry is current. */
  readonly nav?: 'overview' | 'jobs' | 'executions' | 'files' | 'lineage';
  readonly project?: { readonly id: string; readonly name: string };
  readonly csrf?: string;
}

const hb = Handlebars.create();

const pad = (n: number) => String(n).padStart(2, '0');

hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
hb.registerHelper('not', (a: unknown) => !a);
hb.registerHelper('time', (t: unknown) => {
  if (typeof t !== 'string' || t === '') return '—';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
});
hb.registerHelper('duration', (s: unknown) => {
  if (typeof s !== 'number') return '—';
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
});
hb.registerHelper('json', (v: unknown) => JSON.stringify(v, null, 2));
hb.registerHelper('join', (v: unknown, sep: unknown) => (Array.isArray(v) ? v.join(typeof sep === 'string' ? sep : ', ') : ''));
hb.registerHelper('encode', (v: unknown) => encodeURIComponent(String(v ?? '')));

for (const [name, text] of Object.entries(TEMPLATES)) if (name.startsWith('_')) hb.registerPartial(name.slice(1), text);

const compiled = new Map(Object.entries(TEMPLATES).map(([name, text]) => [name, hb.compile(text, { strict: false })]));
const layout = compiled.get('layout')!;

export function renderPage(view: keyof typeof TEMPLATES, data: LayoutData & Record<string, unknown>): string {
  const template = compiled.get(view);
  if (!template) throw new Error(`no view ${view}`);
  return layout({ ...data, body: new hb.SafeString(template(data)) });
}

/** Markup built by an escaping renderer (the lineage SVG), passed through unchanged. */
export const trusted = (html: string): Handlebars.SafeString => new hb.SafeString(html);
