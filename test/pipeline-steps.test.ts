// Pipeline steps through the runner: log, check,
// set, write/read on a file connection, group with loop and concurrency,
// if / on_failure / retry / goto, the step limit, http against a local
// server, command steps (disabled by default; cancel kills the process).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runText, statuses, workspace, writeTree, type Workspace } from './helpers/pipeline-harness.js';

let ws: Workspace;
let server: http.Server;
let base = '';
const seen = { active: 0, maxActive: 0, flaky: 0, posts: [] as unknown[] };

before(async () => {
  ws = workspace();
  writeTree(ws.root, { 'data/in.txt': 'hello from the project' });
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/json') return void res.writeHead(200, { 'content-type': 'application/json', 'x-id': '7' }).end('{"ok":true,"n":[1,2]}');
      if (url.pathname === '/echo') {
        seen.posts.push({ method: req.method, type: req.headers['content-type'], auth: req.headers.authorization, body });
        return void res.writeHead(201).end(body);
      }
      if (url.pathname === '/missing') return void res.writeHead(404).end('nope');
      if (url.pathname === '/flaky') return void (++seen.flaky === 1 ? res.writeHead(503).end('busy') : res.writeHead(200).end('fine'));
      if (url.pathname === '/big') return void res.writeHead(200).end('x'.repeat(1024 * 1024 + 10));
      if (url.pathname === '/slow') {
        seen.active++;
        seen.maxActive = Math.max(seen.maxActive, seen.active);
        const ms = Number(url.searchParams.get('ms') ?? '100');
        return void setTimeout(() => {
          seen.active--;
          res.writeHead(200).end(url.searchParams.get('v') ?? '');
        }, ms);
      }
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('log, set, check: records per step, state.<id>, store, generated ids step_<n>, success', async () => {
  const out = await runText(
    [
      'env: {WHO: world}',
      'steps:',
      "  - log: 'hello {env.WHO} at {timestamp.date}'",
      '  - id: put',
      '    type: set',
      '    map: {count: 3, name: "{env.WHO}", ts: "{execution.exec_id}"}',
      '  - {type: set, key: total, value: "{store.count * 2}"}',
      '  - {type: set, key: name, delete: true}',
      '  - id: ok',
      '    check: store.total == 6 and store.name == null',
      '  - id: say',
      '    type: log',
      '    level: warn',
      "    message: 'total={store.total} ok={state.ok.result}'",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success');
  assert.equal(out.result.error, null);
  assert.deepEqual(out.started, ['step_1', 'put', 'step_3', 'step_4', 'ok', 'say']);
  assert.deepEqual(statuses(out), { step_1: 'success', put: 'success', step_3: 'success', step_4: 'success', ok: 'success', say: 'success' });
  assert.deepEqual(out.records.get('step_1')!.state, { message: 'hello world at 2025-03-01' });
  assert.deepEqual(out.store, { count: 3, ts: 'e1', total: 6 });
  const self = await runText("steps:\n  - {type: set, key: a, value: 1}\n  - {type: set, key: me, value: '{store}'}\n  - {type: set, key: me2, value: '{store}'}\n  - log: '{store}'\n", ws);
  assert.equal(self.result.status, 'success', self.result.error ?? '');
  assert.deepEqual(self.records.get('step_4')!.state, { message: '{"a":1,"me":{"a":1},"me2":{"a":1,"me":{"a":1}}}' });
  assert.deepEqual(out.state, { put: {}, ok: { result: true }, say: { message: 'total=6 ok=true' } });
  assert.deepEqual(out.output.get('say'), ['warn: total=6 ok=true']);
  const rec = out.records.get('ok')!;
  assert.match(rec.startTime!, /^\d{4}-\d{2}-\d{2}T/);
  assert.ok(rec.endTime! >= rec.startTime!);
});

test('check: false fails with failure_message (templated) or "check failed: <expression>", state {result: false}', async () => {
  const a = await runText("steps:\n  - {id: c, check: 'store.x == 1', failure_message: 'x was {coalesce(store.x, \"unset\")}'}\n  - log: never\n", ws);
  assert.equal(a.result.status, 'error');
  assert.equal(a.result.error, 'c: x was unset');
  assert.deepEqual(a.records.get('c')!.state, { result: false });
  assert.equal(a.records.get('c')!.error, 'x was unset');
  assert.equal(a.records.has('step_2'), false, 'no record for steps never reached');
  const b = await runText("steps:\n  - check: '1 > 2'\n", ws);
  assert.equal(b.result.error, 'step_1: check failed: 1 > 2');
  const c = await runText("steps:\n  - check: 'store.a < 1'\n", ws);
  assert.equal(c.result.error, 'step_1: cannot compare null and number with <');
});

test('if: false → skipped record and no state; every step skipped → execution skipped', async () => {
  const a = await runText("steps:\n  - {id: a, log: x, if: 'false'}\n  - {id: b, log: y, if: '1 == 1'}\n  - {id: c, log: z, if: false}\n", ws);
  assert.equal(a.result.status, 'success');
  assert.deepEqual(statuses(a), { a: 'skipped', b: 'success', c: 'skipped' });
  assert.equal(a.records.get('a')!.state, null);
  assert.deepEqual(Object.keys(a.state), ['b']);
  const b = await runText("steps:\n  - {log: x, if: 'store.never'}\n", ws);
  assert.equal(b.result.status, 'skipped');
  assert.equal(b.result.error, 'nothing to do: every step was skipped');
});

test('on_failure: warn → warning; quiet → error but execution unaffected; abort → error with summary', async () => {
  const warn = await runText("steps:\n  - {id: w, check: 'false', on_failure: warn}\n  - {id: after, log: ran}\n", ws);
  assert.equal(warn.result.status, 'warning');
  assert.equal(warn.result.error, null);
  assert.deepEqual(statuses(warn), { w: 'warning', after: 'success' });
  const quiet = await runText("steps:\n  - {id: q, check: 'false', on_failure: quiet}\n  - {id: after, log: ran}\n", ws);
  assert.equal(quiet.result.status, 'success');
  assert.deepEqual(statuses(quiet), { q: 'error', after: 'success' });
  assert.equal(quiet.records.get('q')!.error, 'check failed: false');
  const abort = await runText("steps:\n  - {id: a, check: 'false'}\n  - {id: after, log: ran}\n", ws);
  assert.equal(abort.result.status, 'error');
  assert.equal(abort.result.error, 'a: check failed: false');
  assert.deepEqual(statuses(abort), { a: 'error' });
});

test('on_failure: retry runs once more after the delay, then aborts', async () => {
  seen.flaky = 0;
  const ok = await runText(`steps:\n  - {id: h, type: http, url: '${base}/flaky', on_failure: retry}\n`, ws);
  assert.equal(ok.result.status, 'success');
  assert.equal(seen.flaky, 2);
  assert.deepEqual(ok.records.get('h')!.state, { status_code: 200, headers: ok.state.h && (ok.state.h as any).headers, body: 'fine', json: null });
  assert.ok(ok.output.get('h')!.some((l) => l === 'error: http status 503'));
  assert.ok(ok.output.get('h')!.some((l) => /^retrying in /.test(l)));
  const bad = await runText(`steps:\n  - {id: h, type: http, url: '${base}/missing', on_failure: retry}\n  - log: never\n`, ws);
  assert.equal(bad.result.status, 'error');
  assert.equal(bad.result.error, 'h: http status 404');
  assert.equal(bad.output.get('h')!.filter((l) => l === 'error: http status 404').length, 2);
});

test('goto: a counter loop revisits steps; repeated records get #<n>; the step limit bounds endless loops', async () => {
  const out = await runText(
    [
      'steps:',
      '  - {type: set, key: n, value: 0}',
      '  - id: inc',
      '    type: set',
      '    key: n',
      "    value: '{store.n + 1}'",
      '  - id: again',
      "    log: 'n={store.n}'",
      "    if: 'store.n < 3'",
      '    goto: inc',
      "  - {id: done, log: 'final {store.n}'}",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success');
  assert.equal(out.store.n, 3);
  assert.deepEqual(out.started, ['step_1', 'inc', 'again', 'inc#2', 'again#2', 'inc#3', 'again#3', 'done']);
  assert.equal(out.records.get('again#3')!.status, 'skipped');
  assert.deepEqual(out.state.done, { message: 'final 3' });

  const endless = await runText("steps:\n  - {id: a, log: tick, goto: b}\n  - {id: b, log: tock, goto: a}\n", ws, { tuning: { stepLimit: 7 } });
  assert.equal(endless.result.status, 'error');
  assert.equal(endless.result.error, 'step limit of 7 exceeded');
  assert.equal(endless.result.executed, 7);
  assert.equal(endless.records.size, 7);
});

test('group with loop and bounded concurrency: record ids each.q[i], loop.value/index, state.<id> of the last iteration', async () => {
  seen.maxActive = 0;
  const out = await runText(
    [
      'steps:',
      '  - id: each',
      '    type: group',
      "    loop: ['a', 'b', 'c', 'd', 'e']",
      '    concurrency: 2',
      '    steps:',
      '      - id: q',
      '        type: http',
      "        url: '" + base + "/slow?ms=120&v={loop.value}{loop.index}'",
      '      - {type: set, key: "seen_{loop.value}", value: "{state.q.body}"}',
      '  - id: plain',
      '    type: group',
      '    steps:',
      '      - {id: inner, log: "in group, loop={loop}"}',
      "  - check: 'state.each.iterations == 5 and length(keys(store)) == 5'",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  assert.equal(seen.maxActive, 2, 'at most 2 iterations at once');
  for (let i = 0; i < 5; i++) {
    assert.equal(out.records.get(`each.q[${i}]`)!.status, 'success');
    assert.equal(out.records.get(`each.step_2[${i}]`)!.status, 'success');
  }
  assert.deepEqual(out.store, { seen_a: 'a0', seen_b: 'b1', seen_c: 'c2', seen_d: 'd3', seen_e: 'e4' });
  assert.deepEqual(out.records.get('each')!.state, { iterations: 5 });
  assert.deepEqual(out.records.get('plain')!.state, { iterations: 1 });
  assert.deepEqual(out.state.inner, { message: 'in group, loop=' });
  assert.ok(out.started.indexOf('each') < out.started.indexOf('each.q[0]'));
  assert.equal(out.records.size, 5 * 2 + 1 + 2 + 1);
  // state.q holds the last finished iteration
  assert.ok(['a0', 'b1', 'c2', 'd3', 'e4'].includes((out.state.q as any).body));
});

test('loop from an expression, nested groups, break leaves the innermost loop, failures inside groups', async () => {
  const out = await runText(
    [
      'env: {LIST: "x,y,z"}',
      'steps:',
      '  - id: outer',
      '    type: group',
      "    loop: 'split(env.LIST, \",\")'",
      '    steps:',
      '      - id: inner',
      '        type: group',
      '        loop: [1, 2, 3]',
      '        steps:',
      "          - {id: stop, check: 'loop.value < 2', on_failure: break}",
      "          - {id: mark, type: set, key: '{loop.value}', value: 1}",
      "  - {id: after, log: 'keys={join(keys(store))}'}",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'warning');
  assert.deepEqual(out.records.get('outer')!.state, { iterations: 3 });
  assert.deepEqual(out.records.get('outer.inner[2]')!.state, { iterations: 2 });
  assert.equal(out.records.get('outer.inner[0].stop[1]')!.status, 'warning');
  assert.equal(out.records.get('outer.inner[0].mark[0]')!.status, 'success');
  assert.equal(out.records.has('outer.inner[0].mark[1]'), false);
  assert.equal(out.records.has('outer.inner[0].stop[2]'), false);
  assert.deepEqual(out.state.after, { message: 'keys=1' });

  const failing = await runText(
    [
      'steps:',
      '  - id: g',
      '    type: group',
      '    loop: [1, 2, 3]',
      '    concurrency: 3',
      '    steps:',
      "      - {id: c, check: 'loop.value == 1'}",
      '  - log: never',
    ].join('\n'),
    ws,
  );
  assert.equal(failing.result.status, 'error');
  assert.match(failing.result.error!, /^g\.c\[[12]\]: check failed: loop\.value == 1 \(and 1 more\)$/);
  assert.equal(failing.records.get('g')!.status, 'error');
  assert.match(failing.records.get('g')!.error!, /^g\.c\[[12]\]: check failed/);
  assert.equal(failing.records.has('step_2'), false);

  const tolerated = await runText("steps:\n  - id: g\n    type: group\n    on_failure: warn\n    steps:\n      - {id: c, check: 'false'}\n  - {id: next, log: ok}\n", ws);
  assert.equal(tolerated.result.status, 'warning');
  assert.deepEqual(statuses(tolerated), { 'g.c': 'error', g: 'warning', next: 'success' });

  const notList = await runText("steps:\n  - {id: g, type: group, loop: 'store.nothing', steps: [{log: x}]}\n", ws);
  assert.equal(notList.result.error, 'g: loop must yield a list, got null');
});

test('write and read on a file connection; read file:// from the project; paths cannot leave the roots', async () => {
  const out = await runText(
    [
      'steps:',
      '  - id: w',
      '    type: write',
      "    to: 'FILES/reports/{timestamp.date}.json'",
      '    content: {rows: 3, who: "{execution.job_name}"}',
      '  - id: r',
      '    type: read',
      "    from: 'FILES/reports/2025-03-01.json'",
      '  - id: p',
      '    type: read',
      '    from: file://data/in.txt',
      "  - check: 'json(state.r.content).who == \"p\" and state.p.bytes == 22'",
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  const file = join(ws.files, 'reports/2025-03-01.json');
  assert.equal(readFileSync(file, 'utf8'), '{"rows":3,"who":"p"}');
  assert.deepEqual(out.state.w, { location: file, bytes: 20 });
  assert.deepEqual(out.state.r, { content: '{"rows":3,"who":"p"}', bytes: 20 });
  assert.deepEqual(out.state.p, { content: 'hello from the project', bytes: 22 });

  const escape = await runText("steps:\n  - {type: write, to: 'FILES/../outside.txt', content: x}\n", ws);
  assert.match(escape.result.error!, /leaves the root of connection FILES/);
  const escape2 = await runText("steps:\n  - {id: r, type: read, from: 'FILES/{string(\"..\")}/env.yaml'}\n", ws);
  assert.match(escape2.result.error!, /leaves the root of connection FILES/);
  const missing = await runText("steps:\n  - {type: read, from: 'FILES/none.txt'}\n", ws);
  assert.equal(missing.result.error, 'step_1: file "FILES/none.txt" does not exist');
  const notFile = await runText("steps:\n  - {type: read, from: 'DUCK/x.txt'}\n", ws.connections ? { ...ws } : ws).catch((e: Error) => e);
  assert.ok(notFile instanceof Error && /must be a file connection/.test(notFile.message), 'save-time check of the connection kind');
});

test('http: GET with json, POST mapping payload as JSON with headers, 404 fails with state, body truncated at 1 MiB, timeout', async () => {
  seen.posts = [];
  const out = await runText(
    [
      'env: {TOKEN: s3cret}',
      'steps:',
      `  - {id: g, type: http, url: '${base}/json'}`,
      '  - id: p',
      '    type: http',
      `    url: '${base}/echo'`,
      '    method: POST',
      "    headers: {Authorization: 'Bearer {env.TOKEN}'}",
      "    payload: {rows: '{state.g.json.n[1]}', tag: 'n={length(state.g.json.n)}', ok: '{state.g.json.ok}'}",
      `  - {id: s, type: http, method: PUT, url: '${base}/echo', payload: 'plain {state.g.status_code}'}`,
      `  - {id: big, type: http, url: '${base}/big'}`,
    ].join('\n'),
    ws,
  );
  assert.equal(out.result.status, 'success', out.result.error ?? '');
  const g = out.state.g as any;
  assert.equal(g.status_code, 200);
  assert.equal(g.headers['x-id'], '7');
  assert.deepEqual(g.json, { ok: true, n: [1, 2] });
  assert.equal(g.body, '{"ok":true,"n":[1,2]}');
  assert.deepEqual(seen.posts[0], { method: 'POST', type: 'application/json', auth: 'Bearer s3cret', body: '{"rows":2,"tag":"n=2","ok":true}' });
  assert.deepEqual(seen.posts[1], { method: 'PUT', type: 'text/plain;charset=UTF-8', auth: undefined, body: 'plain 200' });
  assert.equal((out.state.p as any).status_code, 201);
  assert.equal((out.state.big as any).body.length, 1024 * 1024);
  assert.equal((out.state.big as any).json, null);

  const nf = await runText(`steps:\n  - {id: n, type: http, url: '${base}/missing'}\n`, ws);
  assert.equal(nf.result.error, 'n: http status 404');
  assert.equal((nf.records.get('n')!.state as any).body, 'nope');
  const slow = await runText(`steps:\n  - {id: t, type: http, url: '${base}/slow?ms=3000', timeout: 1}\n`, ws);
  assert.equal(slow.result.error, 't: http request timed out after 1 s');
});

test('command: disabled unless allowed; shell string, argv list, env, working_dir, non-zero exit', async () => {
  const off = await runText("steps:\n  - {id: c, command: 'echo hi'}\n", ws);
  assert.equal(off.result.error, 'c: command steps are disabled on this server');
  const on = await runText(
    [
      'steps:',
      "  - {id: sh, command: 'echo out-$X$Y; echo err >&2; pwd', env: {X: '{string(1 + 1)}', Y: 3}, working_dir: data}",
      "  - {id: argv, type: command, command: ['printf', '%s|', 'a b', '{state.sh.exit_code}']}",
      "  - {id: bad, command: 'exit 3', on_failure: quiet}",
    ].join('\n'),
    ws,
    { allowCommandSteps: true },
  );
  assert.equal(on.result.status, 'success', on.result.error ?? '');
  const sh = on.state.sh as any;
  assert.equal(sh.exit_code, 0);
  assert.equal(sh.stdout, `out-23\n${join(ws.root, 'data')}\n`);
  assert.equal(sh.stderr, 'err\n');
  assert.match(sh.combined, /out-23\n/);
  assert.deepEqual(on.output.get('sh')!.sort(), ['err', join(ws.root, 'data'), 'out-23'].sort());
  assert.equal((on.state.argv as any).stdout, 'a b|0|');
  assert.equal(on.records.get('bad')!.status, 'error');
  assert.equal(on.records.get('bad')!.error, 'command exited with code 3');
  assert.equal((on.state.bad as any).exit_code, 3);
  const timeout = await runText("steps:\n  - {id: t, command: 'sleep 5', timeout: 1}\n", ws, { allowCommandSteps: true });
  assert.equal(timeout.result.error, 't: command timed out after 1 s');
});

test('cancel: a running command gets SIGTERM (SIGKILL after the grace), http is aborted, records cancelled', async () => {
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort(), 300);
  const out = await runText("steps:\n  - {id: c, command: 'trap \"\" TERM; sleep 10'}\n  - log: never\n", ws, { allowCommandSteps: true, signal: ac.signal, tuning: { killGraceMs: 300 } });
  assert.equal(out.result.status, 'cancelled');
  assert.equal(out.records.get('c')!.status, 'cancelled');
  assert.ok(Date.now() - t0 < 3000, `stopped in ${Date.now() - t0} ms`);
  assert.equal(out.records.has('step_2'), false);

  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 200);
  const h = await runText(`steps:\n  - {id: h, type: http, url: '${base}/slow?ms=5000'}\n`, ws, { signal: ac2.signal });
  assert.equal(h.result.status, 'cancelled');
  assert.equal(h.records.get('h')!.status, 'cancelled');
});

test('replication steps without a replication runner fail clearly; with one, its state and rows count', async () => {
  writeTree(ws.root, { 'replications/users.yaml': 'source: A\ntarget: B\nstreams:\n  public.users:\n    object: main.users\n' });
  const none = await runText('steps:\n  - {id: load, type: replication, path: replications/users.yaml}\n', ws);
  assert.equal(none.result.error, 'load: replication steps need the replication runner');
  const calls: unknown[] = [];
  const withRunner = await runText('steps:\n  - {id: load, type: replication, path: replications/users.yaml, streams: [public.users]}\n  - check: state.load.rows == 3\n', ws, {
    overrides: { mode: 'full-refresh' },
    services: {
      replication: async (step) => {
        calls.push(step);
        return { state: { status: 'success', rows: 3, bytes: 120, tasks: [{ stream_name: 'public.users', object: 'main.users', status: 'success', rows: 3, bytes: 120, error: null }] } };
      },
    },
  });
  assert.equal(withRunner.result.status, 'success');
  assert.equal(withRunner.result.rows, 3);
  assert.equal(withRunner.result.bytes, 120);
  assert.deepEqual(calls, [{ file: 'replications/users.yaml', path: 'replications/users.yaml', streams: ['public.users'], mode: 'full-refresh' }]);
});
