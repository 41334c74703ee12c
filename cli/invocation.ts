/**
 * The command a user should type next, from where they stand. The package is
 * published as `service-orchestrator` (the npm name `service` belongs to an
 * unrelated package) and installs two commands, `service` and
 * `service-orchestrator`:
 *
 * - inside a project (or this repository) that holds the package, `npx service`
 *   runs the local copy;
 * - after a global install, a command on PATH that is this program runs it —
 *   `service`, unless a system tool of that name (Linux's /usr/sbin/service)
 *   comes first in PATH, then `service-orchestrator`, else the bin path itself;
 * - anywhere else, `npx service-orchestrator` fetches the published package
 *   (a bare `npx service` would run the other package).
 */
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { VERSION } from '../engine/version.js';

export const PACKAGE_NAME = 'service-orchestrator';
const COMMAND_NAMES = ['service', PACKAGE_NAME] as const;

/** The package root of this running copy (the folder holding package.json and dist/ or cli/). */
function packageRoot(): string {
  // dist/cli/invocation.js or cli/invocation.ts: the root is the first ancestor with a package.json.
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const inside = (child: string, parent: string) => {
  const r = relative(parent, child);
  return r === '' || (!r.startsWith('..') && !r.startsWith(sep) && r !== '..');
};

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** npm keeps the packages `npx` fetched under `<cache>/_npx/<hash>/node_modules/`. */
const inNpxCache = (dir: string) => dir.split(sep).includes('_npx');

/** The first executable named `name` on PATH, resolved through symlinks, or undefined. */
function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return real(candidate);
    } catch {
      // not here: the next PATH entry
    }
  }
  return undefined;
}

/**
 * The project that holds this copy of the package: this repository itself
 * (a clone), or the project whose node_modules holds it. Undefined for a
 * global install (`<prefix>/lib/node_modules/<pkg>`, no package.json above
 * node_modules) and for npx's cache.
 */
function holdingProject(root: string): string | undefined {
  const parent = dirname(root);
  if (parent.endsWith(`${sep}node_modules`) || dirname(parent).endsWith(`${sep}node_modules`)) {
    const project = parent.endsWith(`${sep}node_modules`) ? dirname(parent) : dirname(dirname(parent));
    if (inNpxCache(project)) return undefined;
    return existsSync(join(project, 'package.json')) ? project : undefined;
  }
  return existsSync(join(root, '.git')) || existsSync(join(root, 'node_modules')) ? root : undefined;
}

export interface InvocationContext {
  /** The package root of the running copy (default: this one). */
  readonly root?: string;
  /** The bin script that started the program (default process.argv[1]). */
  readonly script?: string;
  readonly path?: string;
}

/**
 * What to type to run this program from `where` (a directory): `npx service`,
 * `service`, `service-orchestrator`, a bin path, or `npx service-orchestrator`.
 */
export function commandFrom(where: string, ctx: InvocationContext = {}): string {
  const root = real(ctx.root ?? packageRoot());
  // npx's own copy (`npx service-orchestrator …`): the same again works anywhere.
  if (inNpxCache(root)) return `npx ${PACKAGE_NAME}`;
  const project = holdingProject(root);
  if (project !== undefined && inside(real(resolve(where)), project)) return 'npx service';
  const script = ctx.script ?? process.argv[1];
  const scriptReal = script ? real(script) : undefined;
  // A global install: the bin on PATH is this package's bin/service.js.
  if (scriptReal !== undefined && inside(scriptReal, root)) {
    for (const name of COMMAND_NAMES) if (onPath(name, ctx.path ?? process.env.PATH ?? '') === scriptReal) return name;
    if (project === undefined && script && COMMAND_NAMES.some((n) => script.endsWith(`${sep}${n}`))) return script;
  }
  return `npx ${PACKAGE_NAME}`;
}

/**
 * Where a YAML file written in `fromDir` finds this package's JSON Schemas
 * (ending in `/`): a relative path inside the project that holds the package,
 * a file URL to a global install's schemas/, or the published package's
 * schemas on unpkg when this copy is npx's temporary one.
 */
export function schemaBase(fromDir: string, ctx: Pick<InvocationContext, 'root'> = {}): string {
  const root = real(ctx.root ?? packageRoot());
  if (inNpxCache(root)) return `https://unpkg.com/${PACKAGE_NAME}@${VERSION}/schemas/`;
  const from = real(resolve(fromDir));
  const project = holdingProject(root);
  // Relative inside the project that holds the package (it moves with it); a file URL to a global install.
  if (project !== undefined && inside(from, project)) return `${relative(from, join(root, 'schemas')).split(sep).join('/')}/`;
  return `${pathToFileURL(join(root, 'schemas')).href}/`;
}
