export const files = `<h1>Files</h1>
<p><a href="/ui/files/edit" class="button">New file</a></p>
{{#if notice}}<p class="notice" role="status">{{notice}}</p>{{/if}}
{{#if paging}}<p class="muted paging" data-paging>Entries {{paging.first}}–{{paging.last}} of {{paging.total}}{{#if paging.prev}} · <a href="/ui/files?page={{paging.prev}}" rel="prev">previous</a>{{/if}}{{#if paging.next}} · <a href="/ui/files?page={{paging.next}}" rel="next">next</a>{{/if}}</p>{{/if}}
{{#if entries.length}}
{{> fileTree entries=entries}}
{{else}}
<p class="muted">The project has no files yet.</p>
{{/if}}
`;

export const fileView = `<h1><code>{{file.name}}</code></h1>
{{#if notice}}<p class="notice" role="status">{{notice}}</p>{{/if}}
{{#if warnings.length}}<ul class="warnings">{{#each warnings}}<li>{{this}}</li>{{/each}}</ul>{{/if}}
<p class="actions">
  {{#unless binary}}{{#unless large}}<a href="/ui/files/edit?name={{encode file.name}}" class="button">Edit</a>{{/unless}}{{/unless}}
  <a href="/ui/files/rename?name={{encode file.name}}" class="button">Rename</a>
  <a href="/ui/files/delete?name={{encode file.name}}" class="button danger">Delete</a>
  <span class="muted small">{{file.size}} bytes · updated {{time file.updated}}</span>
</p>
{{#if jobs.length}}
<p>Jobs of this file: {{#each jobs}}<a href="/ui/jobs/{{encode id}}" data-file-job="{{id}}">{{name}}</a>{{#if default}} <span class="tag">default</span>{{/if}} {{/each}}</p>
{{/if}}
{{#if large}}
<p class="muted">Too large to show here: read it with the API's file get.</p>
{{else if binary}}
<p class="muted">Not UTF-8 text: not shown.</p>
{{else}}
<pre class="source numbered">{{#each lines}}<span class="line"><span class="ln">{{n}}</span>{{text}}</span>{{/each}}</pre>
{{/if}}
`;

export const fileEdit = `<h1>{{#if isNew}}New file{{else}}Edit <code>{{name}}</code>{{/if}}</h1>
{{#if problems.length}}
<section class="problems" role="alert">
<h2>{{problems.length}} problem(s) — the file was not saved</h2>
<ul>
{{#each problems}}<li data-problem-line="{{line}}"><a href="#L{{line}}">{{#if line}}line {{line}}{{#if column}}, column {{column}}{{/if}}{{else}}file{{/if}}</a>: {{message}}{{#if path}} <code class="muted">{{path}}</code>{{/if}}</li>{{/each}}
</ul>
<pre class="source numbered">{{#each lines}}<span class="line{{#if problems.length}} has-problem{{/if}}" id="L{{n}}"><span class="ln">{{n}}</span>{{text}}</span>{{#each problems}}<span class="problem-marker" data-line="{{../n}}">{{pad}}^ {{message}}</span>{{/each}}{{/each}}</pre>
</section>
{{/if}}
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
<form method="post" action="/ui/files/save" class="stack editor">
  <input type="hidden" name="_csrf" value="{{csrf}}">
  {{#if isNew}}
  <label for="name">File name (relative to the project root)</label>
  <input id="name" name="name" value="{{name}}" required spellcheck="false">
  <input type="hidden" name="new" value="1">
  {{else}}
  <input type="hidden" name="name" value="{{name}}">
  {{/if}}
  <label for="body">Content</label>
  <textarea id="body" name="body" rows="24" spellcheck="false" wrap="off">{{body}}</textarea>
  <div><button type="submit" class="primary">Save</button> {{#unless isNew}}<a href="/ui/files/view?name={{encode name}}">Cancel</a>{{/unless}}</div>
</form>
`;

/** One level of the tree; directories fold (open down to the second level). */
export const _fileTree = `<ul class="tree">{{#each entries}}
<li>{{#if is_dir}}<details{{#if open}} open{{/if}}><summary class="dirname">{{base}}/</summary>{{> fileTree entries=children}}</details>{{else}}<a href="/ui/files/view?name={{encode name}}">{{base}}</a> <span class="muted small">{{size}} B</span>{{/if}}</li>{{/each}}
</ul>`;
