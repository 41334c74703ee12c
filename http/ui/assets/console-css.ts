/** The console's one stylesheet, served as /ui/static/console.css (the CSP allows styles from this origin only). */
export const CONSOLE_CSS = `
:root { --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --bg: #f8fafc; --card: #fff; --accent: #1d4ed8;
  --ok: #1f8a3b; --ok-bg: #d3f2dc; --err: #c0281b; --err-bg: #f8c9c4; --warn: #a16207; --warn-bg: #fef3c7; --run: #1d4ed8; --run-bg: #dbeafe; --grey: #52525b; --grey-bg: #e4e4e7; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
code, pre, textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
a { color: var(--accent); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 10px 20px; background: #0f172a; color: #e2e8f0; }
header.top a { color: #e2e8f0; text-decoration: none; }
header.top .brand { font-weight: 700; letter-spacing: .02em; }
header.top .project { color: #94a3b8; }
header.top nav { display: flex; flex-wrap: wrap; gap: 4px 14px; flex: 1; }
header.top nav a[aria-current="page"] { color: #fff; border-bottom: 2px solid #60a5fa; }
header.top .signout button { background: transparent; color: #e2e8f0; border: 1px solid #475569; }
main { max-width: 1240px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 22px; margin: 8px 0 16px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 18px 0 10px; }
.card h2, .problems h2 { margin-top: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 0 0 16px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0 0 8px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); white-space: nowrap; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.error { color: var(--err); }
.ok { color: var(--ok); }
.notice { background: var(--ok-bg); border-radius: 6px; padding: 6px 10px; }
.warnings { background: var(--warn-bg); border-radius: 6px; padding: 6px 10px 6px 28px; }
button, .button { display: inline-block; font: inherit; font-size: 14px; padding: 5px 12px; border-radius: 6px; border: 1px solid #cbd5e1; background: #fff; color: var(--fg); cursor: pointer; text-decoration: none; }
button.primary, .button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger, .button.danger { background: #fff; border-color: var(--err); color: var(--err); }
form.inline { display: inline; margin: 0; }
form.stack { display: flex; flex-direction: column; gap: 6px; align-items: flex-start; }
form.stack textarea, form.stack input[type=text], form.stack input:not([type]) { width: 100%; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: flex-end; margin: 0 0 12px; }
form.filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
input, select, textarea { font: inherit; padding: 5px 7px; border: 1px solid #cbd5e1; border-radius: 6px; background: #fff; max-width: 100%; }
textarea { width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.signin { max-width: 420px; margin: 40px auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 20px; }
.signin form { display: flex; flex-direction: column; gap: 8px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; text-decoration: none; background: var(--grey-bg); color: var(--grey); }
.status-success { background: var(--ok-bg); color: var(--ok); }
.status-error, .status-interrupted { background: var(--err-bg); color: var(--err); }
.status-warning { background: var(--warn-bg); color: var(--warn); }
.status-running, .status-queued { background: var(--run-bg); color: var(--run); }
.tag { font-size: 11px; background: var(--grey-bg); border-radius: 4px; padding: 0 5px; }
pre { background: #0f172a; color: #e2e8f0; padding: 10px 12px; border-radius: 6px; overflow-x: auto; margin: 6px 0; }
pre.small { background: #f1f5f9; color: var(--fg); }
pre.inline { display: inline-block; margin: 2px 0; }
pre.log { max-height: 480px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.source { white-space: pre; }
pre.numbered .line { display: block; min-height: 1.2em; }
pre.numbered .ln { display: inline-block; width: 3.5em; color: #64748b; user-select: none; }
pre.numbered .has-problem { background: #7f1d1d; }
pre .problem-marker { display: block; color: #fca5a5; padding-left: 3.5em; white-space: pre; }
.problems { border: 1px solid var(--err); border-radius: 8px; padding: 10px 14px; margin: 0 0 14px; background: #fff5f5; }
.problems h2 { color: var(--err); }
details.record { border-top: 1px solid var(--line); padding: 6px 0; }
details.record summary { cursor: pointer; overflow-wrap: anywhere; }
ul.tree { list-style: none; padding: 0 0 0 18px; margin: 0; font-family: ui-monospace, monospace; font-size: 14px; }
main > ul.tree { padding-left: 0; }
ul.tree li { padding: 2px 0; overflow-wrap: anywhere; }
ul.tree .dirname { color: var(--muted); cursor: pointer; }
.pager { display: flex; gap: 16px; margin: 12px 0; }
.graph { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 6px; }
.graph svg { display: block; }
.graph a:hover rect { stroke-width: 3; }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; border: 1px solid #4b5563; }
.swatch.status-success { background: #d3f2dc; border-color: #1f8a3b; }
.swatch.status-error { background: #f8c9c4; border-color: #c0281b; }
.swatch.status-skipped { background: #e4e4e7; border-color: #71717a; }
.swatch.status-none { background: #fff; }
.js .nojs-only { display: none; }
header.top form.search { margin: 0; }
header.top form.search input { width: 240px; padding: 4px 8px; border-color: #475569; background: #1e293b; color: #e2e8f0; }
header.top form.search input::placeholder { color: #94a3b8; }
.page-title { margin: 0 0 12px; }
.page-title p { margin: 0; }
h1.node-title { font-size: 26px; margin-bottom: 4px; display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; }
h1.node-title .tag { font-size: 13px; font-weight: 500; padding: 2px 8px; }
nav.zoom { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 8px; margin: 0 0 8px; }
nav.zoom .button { padding: 2px 10px; }
.gantt-box svg, .history-box svg { display: block; width: 100%; height: auto; }
.gantt-box svg { min-width: 760px; }
.history-box svg { min-width: 480px; max-width: 960px; }
.graph a:hover g.run rect { opacity: .75; }
g.bar:hover rect:last-of-type { stroke-width: 2.5; }
table.nodes td { white-space: nowrap; }
table.nodes td:first-child { white-space: normal; }
@media (max-width: 640px) {
  header.top { padding: 8px 12px; }
  header.top nav { order: 3; flex-basis: 100%; }
  header.top .signout { margin-left: auto; }
  main { padding: 12px 12px 40px; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dt { margin-top: 6px; }
  th, td { padding: 5px 6px; }
  h1 { font-size: 19px; }
  header.top form.search { order: 4; flex-basis: 100%; }
  header.top form.search input { width: 100%; }
}
`;
