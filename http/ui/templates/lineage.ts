export const lineageIndex = `<h1>Lineage</h1>
{{#if projects.length}}
<p>Build projects in this tree:</p>
<ul>{{#each projects}}<li><a href="/ui/lineage/graph?dir={{encode dir}}"><code>{{label}}</code></a> <span class="muted small">{{config}}</span></li>{{/each}}</ul>
{{else}}
<p class="muted">No build project in the tree: a folder with a <code>service_build.yml</code> (or <code>dbt_project.yml</code>) is one.</p>
{{/if}}
`;

export const lineageGraph = `<h1>Lineage of <code>{{label}}</code></h1>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{else}}
<p class="legend"><span class="swatch status-success"></span> success <span class="swatch status-error"></span> error <span class="swatch status-skipped"></span> skipped <span class="swatch status-none"></span> not run yet
{{#if lastRun}} · last run <a href="/ui/executions/{{encode lastRun}}"><code>{{lastRun}}</code></a>{{/if}}</p>
<div class="graph scroll">{{svg}}</div>
<h2>Nodes</h2>
<div class="scroll"><table class="list">
<thead><tr><th>Node</th><th>Kind</th><th>Mode</th><th>Depends on</th><th>Last status</th></tr></thead>
<tbody>
{{#each nodes}}
<tr><td><a href="/ui/lineage/node?dir={{encode ../dir}}&amp;name={{encode name}}"><code>{{name}}</code></a></td><td>{{kind}}</td><td>{{mode}}</td><td>{{join deps ", "}}</td><td>{{#if status}}<span class="status status-{{status}}">{{status}}</span>{{else}}<span class="muted">—</span>{{/if}}</td></tr>
{{/each}}
</tbody></table></div>
{{/if}}
`;

export const lineageNode = `<h1><code>{{node.name}}</code></h1>
<p><a href="/ui/lineage/graph?dir={{encode dir}}">← lineage of {{label}}</a></p>
<section class="card">
<dl class="facts">
  <dt>Kind</dt><dd>{{node.kind}}</dd>
  <dt>Full name</dt><dd><code>{{node.fullName}}</code></dd>
  <dt>File</dt><dd><a href="/ui/files/view?name={{encode fileName}}"><code>{{fileName}}</code></a></dd>
  <dt>Last status</dt><dd>{{#if node.status}}<span class="status status-{{node.status}}">{{node.status}}</span>{{else}}not run yet{{/if}}</dd>
  <dt>Depends on</dt><dd>{{#each upstream}}<a href="/ui/lineage/node?dir={{encode ../dir}}&amp;name={{encode this}}"><code>{{this}}</code></a> {{else}}—{{/each}}</dd>
  <dt>Used by</dt><dd>{{#each downstream}}<a href="/ui/lineage/node?dir={{encode ../dir}}&amp;name={{encode this}}"><code>{{this}}</code></a> {{else}}—{{/each}}</dd>
</dl>
</section>
{{#if config}}<section class="card"><h2>Config</h2><pre class="small">{{json config}}</pre></section>{{/if}}
{{#if isModel}}
<section class="card"><h2>Tests</h2>
{{#if tests.length}}<ul>{{#each tests}}<li><pre class="small inline">{{json this}}</pre></li>{{/each}}</ul>{{else}}<p class="muted">No data tests.</p>{{/if}}
</section>
<section class="card"><h2>Compiled SQL</h2>
{{#each pre}}<pre class="source">{{this}}</pre>{{/each}}
<pre class="source" data-compiled-sql>{{sql}}</pre>
{{#each post}}<pre class="source">{{this}}</pre>{{/each}}
</section>
{{/if}}
`;
