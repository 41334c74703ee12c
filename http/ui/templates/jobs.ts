export const jobs = `<h1>Jobs</h1>
{{#if jobs.length}}
<div class="scroll" data-refresh><table class="list">
<thead><tr><th>Job</th><th>Type</th><th>File</th><th>Schedule</th><th>Next run</th><th>Last status</th><th>Active</th><th></th></tr></thead>
<tbody>
{{#each jobs}}
<tr data-job="{{job.id}}">
  <td><a href="/ui/jobs/{{encode job.id}}">{{job.name}}</a><div class="muted small"><code>{{job.id}}</code></div></td>
  <td>{{job.type}}</td>
  <td><a href="/ui/files/view?name={{encode job.file_name}}"><code>{{job.file_name}}</code></a></td>
  <td>{{#if job.schedules.length}}<code>{{join job.schedules ", "}}</code>{{#if job.timezone}} <span class="muted small">{{job.timezone}}</span>{{/if}}{{else}}<span class="muted">—</span>{{/if}}</td>
  <td>{{time job.next_run}}</td>
  <td>{{#if last}}<a href="/ui/executions/{{encode last.exec_id}}" class="status status-{{last.status}}">{{last.status}}</a>{{else}}<span class="muted">never run</span>{{/if}}</td>
  <td>{{#if job.active}}yes{{else}}no{{/if}}</td>
  <td class="actions">
    <form method="post" action="/ui/jobs/{{encode job.id}}/run" class="inline"><input type="hidden" name="_csrf" value="{{../csrf}}"><button type="submit" class="primary">Run</button></form>
  </td>
</tr>
{{/each}}
</tbody></table></div>
{{else}}
<p class="muted">No jobs yet. Save a job file under <a href="/ui/files">Files</a>: each valid job file gets a default job.</p>
{{/if}}
`;

export const job = `<h1>Job {{job.name}}</h1>
<section class="card">
<dl class="facts">
  <dt>Id</dt><dd><code>{{job.id}}</code>{{#if job.default}} <span class="tag">default job</span>{{/if}}</dd>
  <dt>Type</dt><dd>{{job.type}}</dd>
  <dt>File</dt><dd><a href="/ui/files/view?name={{encode job.file_name}}"><code>{{job.file_name}}</code></a></dd>
  {{#if job.description}}<dt>Description</dt><dd>{{job.description}}</dd>{{/if}}
  <dt>Schedules</dt><dd>{{#if job.schedules.length}}<code>{{join job.schedules ", "}}</code> ({{job.timezone}}){{else}}none{{/if}}</dd>
  <dt>Next run</dt><dd>{{time job.next_run}}</dd>
  <dt>Policy</dt><dd>{{job.policy}}</dd>
  <dt>Active</dt><dd>{{#if job.active}}yes{{else}}no{{/if}}
    <form method="post" action="/ui/jobs/{{encode job.id}}/active" class="inline">
      <input type="hidden" name="_csrf" value="{{csrf}}">
      <input type="hidden" name="active" value="{{#if job.active}}false{{else}}true{{/if}}">
      <button type="submit">{{#if job.active}}Deactivate{{else}}Activate{{/if}}</button>
    </form></dd>
  <dt>Config</dt><dd><pre class="small">{{json job.config}}</pre></dd>
</dl>
</section>
<section class="card">
<h2>Run</h2>
{{#if runError}}<p class="error" role="alert">{{runError}}</p>{{/if}}
<form method="post" action="/ui/jobs/{{encode job.id}}/run" class="stack">
  <input type="hidden" name="_csrf" value="{{csrf}}">
  <label for="vars">Variables, one <code>NAME=value</code> per line (override the job's vars)</label>
  <textarea id="vars" name="vars" rows="3" spellcheck="false">{{vars}}</textarea>
  <button type="submit" class="primary">Run now</button>
</form>
</section>
{{#if history}}<section class="card">
<h2>Run history</h2>
<p class="muted small">Duration and status of the last {{history.count}} run(s), oldest on the left; each bar opens its execution.</p>
<div class="graph scroll history-box" data-history>{{history.svg}}</div>
</section>{{/if}}
<section class="card">
<h2>Executions</h2>
{{> executionTable executions=executions}}
<p><a href="/ui/executions?job={{encode job.id}}">All executions of this job</a></p>
</section>
`;

export const _executionTable = `{{#if executions.length}}
<div class="scroll" data-refresh><table class="list executions">
<thead><tr><th>Execution</th><th>Job</th><th>Status</th><th>Trigger</th><th>Started (UTC)</th><th>Duration</th><th>Rows</th></tr></thead>
<tbody>
{{#each executions}}
<tr data-exec="{{exec_id}}">
  <td><a href="/ui/executions/{{encode exec_id}}"><code>{{exec_id}}</code></a></td>
  <td>{{job_name}}</td>
  <td><span class="status status-{{status}}">{{status}}</span></td>
  <td>{{trigger}}</td>
  <td>{{time start_time}}</td>
  <td>{{duration duration}}</td>
  <td>{{rows}}</td>
</tr>
{{/each}}
</tbody></table></div>
{{else}}
<p class="muted">No executions.</p>
{{/if}}`;
