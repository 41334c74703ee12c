export const executions = `<h1>Executions</h1>
<form method="get" action="/ui/executions" class="filters">
  <label>Status <select name="status">
    <option value="">any</option>
    {{#each statuses}}<option value="{{value}}"{{#if selected}} selected{{/if}}>{{value}}</option>{{/each}}
  </select></label>
  <label>Job <select name="job">
    <option value="">any</option>
    {{#each jobs}}<option value="{{id}}"{{#if selected}} selected{{/if}}>{{name}}</option>{{/each}}
  </select></label>
  <label>From (UTC) <input type="datetime-local" name="from" value="{{filters.from}}" step="1"></label>
  <label>To (UTC) <input type="datetime-local" name="to" value="{{filters.to}}" step="1"></label>
  <button type="submit">Filter</button>
  <a href="/ui/executions">Clear</a>
</form>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
{{> executionTable executions=executions}}
<nav class="pager">
  {{#if newer}}<a href="{{newer}}" rel="prev">← Newer</a>{{/if}}
  {{#if paged}}<a href="{{newest}}">Newest</a>{{/if}}
  {{#if older}}<a href="{{older}}" rel="next">Older →</a>{{/if}}
</nav>
`;

export const execution = `<h1>Execution <code>{{exec.exec_id}}</code></h1>
<section class="card" data-live="/ui/executions/{{encode exec.exec_id}}/events">
<dl class="facts">
  <dt>Status</dt><dd><span class="status status-{{exec.status}}" data-exec-status>{{exec.status}}</span></dd>
  <dt>Job</dt><dd><a href="/ui/jobs/{{encode exec.job_id}}">{{exec.job_name}}</a> ({{exec.job_type}}, <a href="/ui/files/view?name={{encode exec.file_name}}"><code>{{exec.file_name}}</code></a>)</dd>
  <dt>Trigger</dt><dd>{{exec.trigger}}</dd>
  <dt>Started (UTC)</dt><dd>{{time exec.start_time}}</dd>
  <dt>Ended (UTC)</dt><dd data-exec-end>{{time exec.end_time}}</dd>
  <dt>Duration</dt><dd data-exec-duration>{{duration exec.duration}}</dd>
  <dt>Rows</dt><dd data-exec-rows>{{exec.rows}}</dd>
  <dt>Error</dt><dd class="error" data-exec-error>{{exec.error}}</dd>
</dl>
{{#if active}}
<form method="post" action="/ui/executions/{{encode exec.exec_id}}/cancel" class="inline" data-cancel>
  <input type="hidden" name="_csrf" value="{{csrf}}">
  <button type="submit" class="danger">Cancel</button>
</form>
<p class="muted small nojs-only">This page does not update by itself without JavaScript: <a href="/ui/executions/{{encode exec.exec_id}}">reload</a> to see progress.</p>
{{/if}}
</section>
{{#if isPipeline}}{{> buildNodes builds=builds}}{{/if}}
<section class="card">
<h2>{{#if isPipeline}}Steps{{else}}Tasks{{/if}}</h2>
<div data-records>
{{#each records}}
<details class="record" data-record="{{id}}" open>
  <summary><code>{{id}}</code> <span class="muted">{{label}}</span> <span class="status status-{{status}}" data-record-status>{{status}}</span> <span class="muted small" data-record-time>{{time start_time}}{{#if end_time}} → {{time end_time}}{{/if}}</span>{{#if rows}} · {{rows}} rows{{/if}}</summary>
  {{#if error}}<p class="error">{{error}}</p>{{/if}}
  {{#if truncated}}<p class="muted small">Showing the last {{truncated}} of the output; <code>service execs log</code> prints all of it.</p>{{/if}}
  <pre class="log" data-log="{{id}}">{{output}}</pre>
</details>
{{else}}
<p class="muted" data-no-records>No {{#if isPipeline}}steps{{else}}tasks{{/if}} yet.</p>
{{/each}}
</div>
</section>
`;

/** The nodes of each build step: where the time went (Gantt) and what each node did (table). Swapped in by the script when a live execution ends. */
export const _buildNodes = `<div data-nodes>
{{#each builds}}
<section class="card build-nodes" data-build-step="{{stepId}}">
<h2>Build nodes of step <code>{{stepId}}</code> <span class="muted small">{{command}}</span></h2>
<p class="muted small" data-build-summary>{{nodeCount}} node(s){{#if threads}} on {{threads}} thread(s){{/if}}{{#if parallelism}} · {{parallelism}}× parallel (node time over the time from the first start to the last end){{/if}}{{#if span}} · first node started {{duration beforeFirst}} after the step (load, compile, connect){{/if}}</p>
{{#if gantt}}<div class="graph scroll gantt-box">{{gantt}}</div>{{else}}<p class="muted small">No start times recorded for these nodes: the Gantt chart needs a build run by this version of the daemon.</p>{{/if}}
<div class="scroll"><table class="list nodes">
<thead><tr><th>Node</th><th>Type</th><th>Status</th><th>Start</th><th>Duration</th><th>Rows</th><th>Thread</th></tr></thead>
<tbody>
{{#each rows}}
<tr data-node="{{name}}"><td><code>{{name}}</code>{{#if project}} <span class="muted small">{{project}}</span>{{/if}}{{#if error}}<div class="error small">{{error}}</div>{{/if}}</td><td>{{type}}{{#if mode}} <span class="muted small">{{mode}}</span>{{/if}}</td><td><span class="status status-{{status}}">{{status}}</span></td><td>{{#if offset}}{{offset}}{{else}}<span class="muted">—</span>{{/if}}</td><td>{{#if offset}}{{duration duration}}{{else}}<span class="muted">—</span>{{/if}}</td><td>{{rows}}</td><td>{{#if threadText}}{{threadText}}{{else}}<span class="muted">—</span>{{/if}}</td></tr>
{{/each}}
</tbody></table></div>
</section>
{{/each}}
</div>
`;
