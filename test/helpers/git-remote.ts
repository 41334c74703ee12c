/**
 * Real git remotes for the git sync tests (no network): a bare repository
 * in a temp dir with a work clone that commits and pushes, served either as
 * a `file://` URL or over HTTP on 127.0.0.1 by `git http-backend` (CGI) —
 * the HTTP server can demand Basic credentials, cut the connection in the
 * middle of the pack it sends (a remote that disappears during a fetch), or
 * never answer (a fetch that runs into the time limit).
 */
import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** git with a fixed identity and no ambient configuration of the test machine. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  const { stdout } = await run('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, env });
  return stdout;
}

export interface GitRemoteRepo {
  /** The bare repository. */
  readonly bare: string;
  readonly url: string;
  /**
   * Writes (string/Buffer), deletes (null) or symlinks (`{ symlink: target }`)
   * files in the work clone, commits everything and pushes to `branch`;
   * returns the new commit sha.
   */
  commit(files: Readonly<Record<string, string | Buffer | null | { symlink: string }>>, branch?: string): Promise<string>;
}

export async function createGitRemote(base: string, name = 'remote'): Promise<GitRemoteRepo> {
  const bare = path.join(base, `${name}.git`);
  const work = path.join(base, `${name}-work`);
  await mkdir(work, { recursive: true });
  await git(base, 'init', '--quiet', '--bare', bare);
  await git(work, 'init', '--quiet');
  let n = 0;
  return {
    bare,
    url: `file://${bare}`,
    async commit(files, branch = 'main') {
      for (const [file, content] of Object.entries(files)) {
        const abs = path.join(work, file);
        await rm(abs, { force: true, recursive: true });
        if (content === null) continue;
        await mkdir(path.dirname(abs), { recursive: true });
        if (typeof content === 'object' && !Buffer.isBuffer(content)) await symlink(content.symlink, abs);
        else await writeFile(abs, content);
      }
      await git(work, 'add', '--all');
      await git(work, 'commit', '--quiet', '--allow-empty', '-m', `commit ${++n}`);
      await git(work, 'push', '--quiet', '--force', bare, `HEAD:refs/heads/${branch}`);
      return (await git(work, 'rev-parse', 'HEAD')).trim();
    },
  };
}

/** Every entry under `root` by relative name: file content, or `<dir>` for a directory (to compare a tree before and after). */
export async function treeSnapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(root, path.join(e.parentPath, e.name));
    out[rel] = e.isDirectory() ? '<dir>' : await readFile(path.join(root, rel), 'utf8');
  }
  return out;
}

export type HttpRemoteMode = 'serve' | 'cut-pack' | 'hang';

export interface HttpGitServer {
  /** `http://127.0.0.1:<port>/<name>.git` for a bare repository under `root`. */
  url(repo: string): string;
  mode: HttpRemoteMode;
  /** Authorization headers received, in order (to check what git sent). */
  readonly authorizations: string[];
  close(): Promise<void>;
}

/**
 * Serves the bare repositories under `root` with `git http-backend`. With
 * `credentials`, requests without that Basic user/password get 401.
 */
export async function startHttpGitServer(root: string, credentials?: { user: string; password: string }): Promise<HttpGitServer> {
  const expected = credentials ? `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}` : undefined;
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    if (state.mode === 'hang') return; // never answers; the client gives up
    const auth = req.headers.authorization;
    if (auth) authorizations.push(auth);
    if (expected && auth !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (c: Buffer) => chunks.push(c));
    cgi.on('close', () => {
      const out = Buffer.concat(chunks);
      const split = out.indexOf('\r\n\r\n');
      const head = out.subarray(0, split).toString('latin1');
      const body = out.subarray(split + 4);
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.split('\r\n')) {
        const colon = line.indexOf(':');
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[key] = value;
      }
      if (state.mode === 'cut-pack' && body.includes('PACK')) {
        // The remote goes away half-way through the pack.
        res.writeHead(status, headers);
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        return;
      }
      res.writeHead(status, headers).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const state: HttpGitServer = {
    url: (repo) => `http://127.0.0.1:${port}/${repo}`,
    mode: 'serve',
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
}
