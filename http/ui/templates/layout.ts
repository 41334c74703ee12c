/** The page frame: header with the project and navigation, sign-out, the page, the script (external, deferred). */
export const layout = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} · service</title>
<link rel="stylesheet" href="/ui/static/console.css">
<script src="/ui/static/console.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="/ui">service</a>
  {{#if project}}
  <span class="project" title="project {{project.id}}">{{project.name}}</span>
  <nav>
    <a href="/ui"{{#if (eq nav "overview")}} aria-current="page"{{/if}}>Overview</a>
    <a href="/ui/jobs"{{#if (eq nav "jobs")}} aria-current="page"{{/if}}>Jobs</a>
    <a href="/ui/executions"{{#if (eq nav "executions")}} aria-current="page"{{/if}}>Executions</a>
    <a href="/ui/files"{{#if (eq nav "files")}} aria-current="page"{{/if}}>Files</a>
    <a href="/ui/lineage"{{#if (eq nav "lineage")}} aria-current="page"{{/if}}>Lineage</a>
  </nav>
  <form method="get" action="/ui/search" class="search" role="search">
    <input type="search" name="q" value="{{q}}" placeholder="Search jobs, files, executions" aria-label="Search jobs, files and executions" maxlength="200" spellcheck="false">
  </form>
  <form method="post" action="/ui/sign-out" class="signout">
    <input type="hidden" name="_csrf" value="{{csrf}}">
    <button type="submit">Sign out</button>
  </form>
  {{/if}}
</header>
<main>
{{body}}
</main>
</body>
</html>
`;

export const signIn = `<section class="signin">
<h1>Sign in</h1>
<p>Paste a project token (from <code>service token create --project NAME</code>). It is exchanged for a session and never shown again.</p>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
{{#if notice}}<p class="notice">{{notice}}</p>{{/if}}
<form method="post" action="/ui/sign-in">
  <input type="hidden" name="_csrf" value="{{csrf}}">
  <input type="hidden" name="next" value="{{next}}">
  <label for="token">Project token</label>
  <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required>
  <button type="submit">Sign in</button>
</form>
</section>
`;

export const error = `<section>
<h1>{{heading}}</h1>
<p class="error" role="alert">{{message}}</p>
<p><a href="{{back}}">Back</a></p>
</section>
`;

export const confirm = `<section>
<h1>{{heading}}</h1>
<p>{{question}}</p>
{{#if detail}}<p class="muted">{{detail}}</p>{{/if}}
<form method="post" action="{{action}}" class="inline">
  <input type="hidden" name="_csrf" value="{{csrf}}">
  {{#each fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/each}}
  {{#if input}}<label for="confirm-input">{{input.label}}</label>
  <input id="confirm-input" name="{{input.name}}" value="{{input.value}}" required spellcheck="false">{{/if}}
  <button type="submit" class="{{buttonClass}}">{{button}}</button>
  <a href="{{back}}">Cancel</a>
</form>
</section>
`;
