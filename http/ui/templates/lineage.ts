export const lineageIndex = `<h1>Lineage</h1>
{{#if projects.length}}
<p>Build projects in this tree:</p>
<ul>{{#each projects}}<li><a href="/ui/lineage/graph?dir={{encode dir}}"><code>{{label}}</code></a> <span class="muted small">{{config}}</span></li>{{/each}}</ul>
{{else}}
<p class="muted">No build project in the tree: a folder with a <code>service_build.yml</code> (or <code>dbt_project.yml</code>) is one.</p>
{{/if}}
`;

export const lineageGraph = `<h1>Lineage of <code>{{label}}</code>{{#if focus}} <span class="muted">around</span> <code>{{focus}}</code>{{/if}}</h1>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{else}}
{{#if focus}}<p class="notice" data-focus="{{focus}}">Showing <code>{{focus}}</code> with everything upstream and downstream of it: {{shown}} of {{of}} nodes. <a href="{{whole}}">Show the whole lineage</a></p>{{/if}}
<nav class="zoom" aria-label="zoom">Zoom <strong data-zoom>{{zoom.label}}</strong>
{{#if zoom.out}}<a class="button" href="{{zoom.out}}" data-zoom-out>−</a>{{/if}}
{{#if zoom.in}}<a class="button" href="{{zoom.in}}" data-zoom-in>+</a>{{/if}}
<a class="button" href="{{zoom.reset}}">100%</a> <a class="button" href="{{zoom.fit}}" data-zoom-fit>Fit</a>
<span class="muted small">To see one node with its up- and downstream only, use <em>focus</em> beside it in the table below.</span></nav>
<p class="legend"><span class="swatch status-success"></span> success <span class="swatch status-error"></span> error <span class="swatch status-skipped"></span> skipped <span class="swatch status-none"></span> not run yet
{{#if lastRun}} · last run <a href="/ui/executions/{{encode lastRun}}"><code>{{lastRun}}</code></a>{{/if}}</p>
<div class="graph scroll">{{svg}}</div>
<h2>Nodes</h2>
<div class="scroll"><table class="list">
<thead><tr><th>Node</th><th>Kind</th><th>Mode</th><th>Depends on</th><th>Last status</th></tr></thead>
<tbody>
{{#each nodes}}
<tr><td><a href="/ui/lineage/node?dir={{encode ../dir}}&amp;name={{encode name}}"><code>{{name}}</code></a> <a class="small" href="/ui/lineage/graph?dir={{encode ../dir}}&amp;focus={{encode name}}" title="only {{name}} and its up- and downstream">focus</a></td><td>{{kind}}</td><td>{{mode}}</td><td>{{join deps ", "}}</td><td>{{#if status}}<span class="status status-{{status}}">{{status}}</span>{{else}}<span class="muted">—</span>{{/if}}</td></tr>
{{/each}}
</tbody></table></div>
{{/if}}
`;

export const lineageNode = `<header class="page-title">
<h1 class="node-title">{{node.name}} <span class="tag kind-{{node.kind}}">{{node.kind}}{{#if isModel}} · {{node.mode}}{{/if}}</span>{{#if node.status}} <span class="status status-{{node.status}}">{{node.status}}</span>{{/if}}</h1>
<p class="muted"><code>{{node.fullName}}</code> in <a href="/ui/lineage/graph?dir={{encode dir}}">{{label}}</a> · <a href="{{focusLink}}" data-focus-link>Focus the lineage on it</a></p>
</header>
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
<section class="card" data-node-runs>
<h2>Recent runs</h2>
{{#if recent.length}}
<p class="muted small">Duration and status of <code>{{node.name}}</code> in its last {{recent.length}} run(s), oldest on the left; each bar opens its execution.</p>
<div class="graph scroll history-box">{{history}}</div>
<div class="scroll"><table class="list">
<thead><tr><th>Execution</th><th>Started (UTC)</th><th>Status</th><th>Duration</th><th>Rows</th></tr></thead>
<tbody>{{#each recent}}<tr data-run="{{execId}}"><td><a href="/ui/executions/{{encode execId}}"><code>{{execId}}</code></a> <span class="muted small">{{stepId}}</span></td><td>{{time startTime}}</td><td><span class="status status-{{status}}">{{status}}</span></td><td>{{duration duration}}</td><td>{{rows}}</td></tr>{{/each}}</tbody>
</table></div>
{{else}}<p class="muted">Not built by a pipeline of this project yet: a <code>build</code> step with the <code>run</code> command records each node's duration and rows.</p>{{/if}}
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
