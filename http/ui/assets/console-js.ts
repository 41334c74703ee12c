/**
 * The console's one script, served as /ui/static/console.js (never inline:
 * the CSP allows scripts from this origin only). Pages work without it; with
 * it, an execution's page follows the execution live over server-sent events.
 * Text from the server is only ever set as text (textContent, append of a
 * string), never parsed as HTML.
 */
export const CONSOLE_JS = `'use strict';
(function () {
  document.documentElement.classList.add('js');
  // Lists with queued or running executions: fetch the same page again every few seconds and
  // swap the list in (parsed by DOMParser, which runs no script), until nothing in it is active.
  var region = document.querySelector('[data-refresh]');
  if (region && window.DOMParser && window.fetch) {
    var refresh = setInterval(function () {
      if (!region.querySelector('.status-running, .status-queued')) { clearInterval(refresh); return; }
      fetch(location.href, { credentials: 'same-origin' }).then(function (r) { return r.ok ? r.text() : null; }).then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html').querySelector('[data-refresh]');
        if (fresh) { region.replaceWith(fresh); region = fresh; }
      }).catch(function () {});
    }, 3000);
  }
  var live = document.querySelector('[data-live]');
  if (!live || !window.EventSource) return;
  var records = document.querySelector('[data-records]');
  function fmtTime(t) { return t ? t.replace('T', ' ').replace(/\\.\\d+Z$/, '') : '—'; }
  function fmtDuration(s) { if (typeof s !== 'number') return '—'; return s < 60 ? s.toFixed(s < 10 ? 2 : 1) + ' s' : Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s'; }
  function setText(sel, text) { var el = document.querySelector(sel); if (el) el.textContent = text; }
  function setStatus(el, status) { el.textContent = status; el.className = 'status status-' + status; }
  function recordEl(id) {
    var found = records.querySelector('[data-record="' + CSS.escape(id) + '"]');
    if (found) return found;
    var empty = records.querySelector('[data-no-records]');
    if (empty) empty.remove();
    var d = document.createElement('details');
    d.className = 'record'; d.open = true; d.setAttribute('data-record', id);
    var s = document.createElement('summary');
    var code = document.createElement('code'); code.textContent = id;
    var label = document.createElement('span'); label.className = 'muted'; label.setAttribute('data-record-label', '');
    var st = document.createElement('span'); st.setAttribute('data-record-status', '');
    var tm = document.createElement('span'); tm.className = 'muted small'; tm.setAttribute('data-record-time', '');
    s.append(code, ' ', label, ' ', st, ' ', tm);
    var pre = document.createElement('pre'); pre.className = 'log'; pre.setAttribute('data-log', id);
    d.append(s, pre);
    records.append(d);
    return d;
  }
  function append(pre, text) {
    var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.append(text);
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }
  var es = new EventSource(live.getAttribute('data-live'));
  es.addEventListener('exec', function (e) {
    var x = JSON.parse(e.data);
    var st = document.querySelector('[data-exec-status]'); if (st) setStatus(st, x.status);
    setText('[data-exec-end]', fmtTime(x.end_time));
    setText('[data-exec-duration]', fmtDuration(x.duration));
    setText('[data-exec-rows]', String(x.rows));
    setText('[data-exec-error]', x.error || '');
    if (x.status !== 'queued' && x.status !== 'running') { var c = document.querySelector('[data-cancel]'); if (c) c.remove(); }
  });
  es.addEventListener('record', function (e) {
    var r = JSON.parse(e.data);
    var el = recordEl(r.id);
    var st = el.querySelector('[data-record-status]'); if (st) setStatus(st, r.status);
    var lb = el.querySelector('[data-record-label]'); if (lb && r.label) lb.textContent = r.label;
    var tm = el.querySelector('[data-record-time]'); if (tm) tm.textContent = fmtTime(r.start_time) + (r.end_time ? ' → ' + fmtTime(r.end_time) : '');
    if (typeof r.output === 'string') { var pre = el.querySelector('[data-log]'); pre.textContent = r.output; pre.scrollTop = pre.scrollHeight; }
  });
  es.addEventListener('chunk', function (e) {
    var c = JSON.parse(e.data);
    append(recordEl(c.id).querySelector('[data-log]'), c.text);
  });
  es.addEventListener('end', function () {
    es.close();
    // A pipeline's build nodes (table and Gantt chart) are drawn from the finished steps: fetch them once, then mark the page ended.
    var nodes = document.querySelector('[data-nodes]');
    if (!nodes || !window.DOMParser || !window.fetch) { live.setAttribute('data-ended', ''); return; }
    fetch(location.href, { credentials: 'same-origin' }).then(function (r) { return r.ok ? r.text() : null; }).then(function (html) {
      var fresh = html && new DOMParser().parseFromString(html, 'text/html').querySelector('[data-nodes]');
      if (fresh) nodes.replaceWith(fresh);
    }).catch(function () {}).then(function () { live.setAttribute('data-ended', ''); });
  });
})();
`;
