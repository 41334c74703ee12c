export const overview = `<h1>Overview</h1>
<section class="card">
<h2>Project</h2>
<dl class="facts">
  <dt>Name</dt><dd>{{projectView.name}}</dd>
  <dt>Id</dt><dd><code>{{projectView.id}}</code></dd>
  <dt>Files</dt><dd>{{projectView.counts.files}}</dd>
  <dt>Jobs</dt><dd>{{projectView.counts.jobs}}</dd>
  <dt>Executions</dt><dd>{{projectView.counts.executions}}</dd>
</dl>
</section>
<section class="card">
<h2>Git</h2>
{{#if projectView.git}}
<dl class="facts">
  <dt>Repository</dt><dd><code>{{projectView.git.url}}</code></dd>
  <dt>Branch</dt><dd>{{projectView.git.branch}}</dd>
  <dt>Sync</dt><dd>{{#if projectView.git.enabled}}on, polling every {{projectView.git.poll_interval}} s{{else}}off{{/if}}</dd>
  <dt>Last pull</dt><dd>{{time projectView.git.last_pull}}{{#if projectView.git.last_sha}} · <code>{{projectView.git.last_sha}}</code>{{/if}}</dd>
  {{#if projectView.git.last_error}}<dt>Last error</dt><dd class="error">{{projectView.git.last_error}}</dd>{{/if}}
</dl>
<form method="post" action="/ui/git/pull" class="inline">
  <input type="hidden" name="_csrf" value="{{csrf}}">
  <button type="submit">Pull now</button>
</form>
{{#if pull}}
<div class="result" role="status" id="pull-result">
  {{#if pull.error}}<p class="error">Pull failed: {{pull.error}}</p>{{else}}
  <p class="ok">{{#if pull.result.pulled}}Pulled{{else}}Already up to date at{{/if}} <code>{{pull.result.sha}}</code>: {{pull.result.created}} created, {{pull.result.updated}} updated, {{pull.result.deleted}} deleted{{#if pull.result.invalid_files.length}}, {{pull.result.invalid_files.length}} invalid job file(s){{/if}}.</p>
  {{#if pull.result.invalid_files.length}}<ul>{{#each pull.result.invalid_files}}<li><code>{{name}}</code></li>{{/each}}</ul>{{/if}}{{/if}}
</div>
{{/if}}
{{else}}
<p class="muted">No git repository is configured for this project (<code>service project update --git-url …</code>).</p>
{{/if}}
</section>
<section class="card">
<h2>Connections</h2>
{{#if connections.length}}
<div class="scroll"><table>
<thead><tr><th>Name</th><th>Type</th><th>Kind</th><th>Source</th><th></th></tr></thead>
<tbody>
{{#each connections}}
<tr>
  <td><code>{{name}}</code></td><td>{{type}}</td><td>{{kind}}</td><td>{{source}}</td>
  <td><form method="post" action="/ui/connections/test" class="inline">
    <input type="hidden" name="_csrf" value="{{../csrf}}"><input type="hidden" name="name" value="{{name}}">
    <button type="submit">Test</button></form></td>
</tr>
{{#if test}}<tr class="test-result"><td colspan="5">{{#if test.valid}}<span class="ok">OK</span> {{name}} answered{{else}}<span class="error">Failed</span> {{test.error}}{{/if}}</td></tr>{{/if}}
{{/each}}
</tbody></table></div>
{{else}}
<p class="muted">No connections: add them to the project's env file.</p>
{{/if}}
</section>
`;
