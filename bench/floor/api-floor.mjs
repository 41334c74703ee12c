// The floor of the API benchmark (bench suite 4): a bare node:http server
// doing the physical work of our measured endpoints and nothing else — no
// Koa, no authentication, no validation, no per-project lock, no request
// log. Plain JavaScript, so it starts like the compiled CLI does.
//
//   GET  /execution/list?limit=N&order=…&status=…&filters=…   the same page
//        query on the same SQLite state file (better-sqlite3, WAL, statements
//        prepared once per filter shape, raw rows) with the documented filters
//        (status, job_id, period, order, limit), the same status-count query
//        for the page, the rows mapped to the API's Execution shape and
//        JSON.stringify'd — on the one thread, as a plain server would.
//   POST /project/file/save        the body parsed, then the file written with
//        the durability of our atomic write: a temporary file in the target's
//        directory, fsync, rename over the target, fsync of the directory.
//   GET  /health                   a constant body.
//
// Usage: node bench/floor/api-floor.mjs <state.db> <project id> <files root>
// Prints `listening on http://127.0.0.1:<port>` on stderr.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat } from 'node:fs/promises';
import http from 'node:http';
import { dirname, join } from 'node:path';

const [stateFile, projectId, filesRoot] = process.argv.slice(2);
const db = new Database(stateFile);
db.pragma('journal_mode = WAL');
const COLUMNS = 'exec_id, job_id, job_name, job_type, file_name, status, error, triggered_by, start_time, end_time, row_count, byte_count, build';
// Raw rows (value arrays): the cheapest way to get a page's values out of better-sqlite3.
const pages = new Map();
function pageStatement(where, order) {
  const sql = `SELECT ${COLUMNS} FROM executions WHERE ${where} ORDER BY start_time ${order}, exec_id ${order} LIMIT ?`;
  let s = pages.get(sql);
  if (!s) pages.set(sql, (s = db.prepare(sql).raw(true)));
  return s;
}
const counts = db.prepare(
  `SELECT exec_id, status, COUNT(*) AS n FROM tasks WHERE exec_id IN (SELECT value FROM json_each(?)) GROUP BY exec_id, status
   UNION ALL
   SELECT exec_id, status, COUNT(*) AS n FROM steps WHERE exec_id IN (SELECT value FROM json_each(?)) GROUP BY exec_id, status`,
);
const STATUSES = ['queued', 'running', 'success', 'error', 'warning', 'skipped', 'cancelled', 'interrupted'];

function list(query) {
  const where = ['project_id = ?'];
  const params = [projectId];
  const filters = query.has('filters') ? JSON.parse(query.get('filters')) : {};
  const statuses = [query.get('status'), filters.status].filter((x) => typeof x === 'string');
  if (new Set(statuses).size > 1) return '{"executions":[]}';
  const add = (condition, value) => {
    where.push(condition);
    params.push(value);
  };
  if (filters.exec_id !== undefined) add('exec_id = ?', filters.exec_id);
  if (filters.job_id !== undefined) add('job_id = ?', filters.job_id);
  if (statuses.length > 0) add('status = ?', statuses[0]);
  if (Array.isArray(filters.period)) {
    where.push('start_time >= ? AND start_time < ?');
    params.push(new Date(filters.period[0]).toISOString(), new Date(filters.period[1]).toISOString());
  }
  const order = query.get('order') === 'asc' ? 'ASC' : 'DESC';
  const rows = pageStatement(where.join(' AND '), order).all(...params, Number(query.get('limit') ?? 25));
  const ids = JSON.stringify(rows.map((r) => r[0]));
  const maps = new Map();
  for (const c of counts.all(ids, ids)) {
    let m = maps.get(c.exec_id);
    if (!m) maps.set(c.exec_id, (m = Object.fromEntries(STATUSES.map((s) => [s, 0]))));
    m[c.status] += c.n;
  }
  return JSON.stringify({
    executions: rows.map(([execId, jobId, jobName, jobType, fileName, status, error, trigger, start, end, rowCount, byteCount, build]) => ({
      exec_id: execId,
      job_id: jobId,
      job_name: jobName,
      job_type: jobType,
      file_name: fileName,
      status,
      error,
      trigger,
      start_time: start,
      end_time: end,
      duration: end === null ? null : (Date.parse(end) - Date.parse(start)) / 1000,
      rows: rowCount,
      bytes: byteCount,
      status_map: maps.get(execId) ?? Object.fromEntries(STATUSES.map((s) => [s, 0])),
      build: build === null ? null : JSON.parse(build),
    })),
  });
}

async function save(text) {
  const { file } = JSON.parse(text);
  const target = join(filesRoot, file.name);
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.service-tmp-${randomBytes(12).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o666);
  try {
    await fh.writeFile(Buffer.from(file.body ?? '', 'utf8'));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, target);
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
  const st = await stat(target);
  return JSON.stringify({ file: { name: file.name, is_dir: false, updated: st.mtime.toISOString(), size: st.size } });
}

const server = http.createServer((req, res) => {
  const reply = (status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const url = new URL(req.url, 'http://floor');
  if (req.method === 'GET' && url.pathname === '/execution/list') {
    req.resume();
    return reply(200, list(url.searchParams));
  }
  if (req.method === 'GET' && url.pathname === '/health') {
    req.resume();
    return reply(200, '{"status":"ok","version":"floor"}');
  }
  if (req.method === 'POST' && url.pathname === '/project/file/save') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      save(Buffer.concat(chunks).toString('utf8')).then(
        (body) => reply(200, body),
        (err) => reply(500, JSON.stringify({ error: String(err), code: 'internal' })),
      );
    });
    return undefined;
  }
  req.resume();
  return reply(404, '{"error":"no route","code":"not_found"}');
});
server.listen(0, '127.0.0.1', () => process.stderr.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => db.close()));
