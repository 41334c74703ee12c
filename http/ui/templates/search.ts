/** Search results: jobs, files and executions matching the text typed in the header's search box. */
export const search = `<h1>Search</h1>
<form method="get" action="/ui/search" class="filters" role="search">
  <label>Jobs, files and executions <input type="search" name="q" value="{{q}}" maxlength="200" spellcheck="false" autofocus></label>
  <button type="submit">Search</button>
</form>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
{{#if empty}}<p class="muted">Type part of a job's name, a file's path, an execution id, a status (<code>error</code>) or words of an error message.</p>{{/if}}
{{#if results}}
<p class="muted" data-search-total>{{total}} match(es) for <code>{{q}}</code>.</p>
<section class="card" data-results="jobs">
<h2>Jobs <span class="muted small">{{jobs.length}}{{#if moreJobs}}+ (the first {{limit}}){{/if}}</span></h2>
{{#if jobs.length}}<div class="scroll"><table class="list">
<thead><tr><th>Job</th><th>Type</th><th>File</th><th>Active</th></tr></thead>
<tbody>{{#each jobs}}<tr data-job="{{id}}"><td><a href="/ui/jobs/{{encode id}}">{{name}}</a> <span class="muted small"><code>{{id}}</code></span></td><td>{{type}}</td><td><a href="/ui/files/view?name={{encode file_name}}"><code>{{file_name}}</code></a></td><td>{{#if active}}yes{{else}}no{{/if}}</td></tr>{{/each}}</tbody>
</table></div>{{else}}<p class="muted">No job matches.</p>{{/if}}
</section>
<section class="card" data-results="files">
<h2>Files <span class="muted small">{{files.length}}{{#if moreFiles}}+ (the first {{limit}}){{/if}}</span></h2>
{{#if files.length}}<ul class="tree">{{#each files}}<li data-file="{{name}}"><a href="/ui/files/view?name={{encode name}}">{{name}}</a> <span class="muted small">{{size}} B · {{time updated}}</span></li>{{/each}}</ul>{{else}}<p class="muted">No file matches.</p>{{/if}}
</section>
<section class="card" data-results="executions">
<h2>Executions <span class="muted small">{{executions.length}}{{#if moreExecutions}}+ (the first {{limit}}){{/if}}</span></h2>
<p class="muted small">Among the newest {{searched}} executions (and any execution by its full id): by id, job name, status or error.</p>
{{#if executions.length}}{{> executionTable executions=executions}}{{else}}<p class="muted">No execution matches.</p>{{/if}}
</section>
{{/if}}
`;
