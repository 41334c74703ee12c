/**
 * Files: the tree, a viewer, an editor that saves through the same service
 * call as `POST /project/file/save` (so the same validation; a job file's
 * problems come back at their line and column and are shown there), and
 * rename and delete behind a confirmation page.
 */
import { EngineError, errorChain } from '../../../engine/errors.js';
import type { ProjectFile } from '../../../engine/files/file-entry.js';
import { STREAM_FILE_BYTES } from '../../../engine/daemon-projects/index.js';
import type { Problem } from '../../../engine/jobs/index.js';
import { toHttpError } from '../../http-error.js';
import type { ConsoleDeps } from '../ui-deps.js';
import { page, redirect, type UiRequest, type UiRoute } from '../ui-route.js';

const viewUrl = (name: string, extra = '') => `/ui/files/view?name=${encodeURIComponent(name)}${extra}`;

/** Numbered lines, each with the problems reported on it (a caret under the column). */
export function numberedLines(body: string, problems: readonly Problem[] = []) {
  const lines = body.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines.map((text, i) => ({
    n: i + 1,
    text,
    problems: problems.filter((p) => p.line === i + 1).map((p) => ({ message: p.message, pad: ' '.repeat(Math.max(0, (p.column ?? 1) - 1)) })),
  }));
}

export interface TreeEntry {
  readonly name: string;
  readonly base: string;
  readonly is_dir: boolean;
  readonly size: number;
  readonly open: boolean;
  readonly children: TreeEntry[];
}

/**
 * The sorted listing (directories included) as nested entries; a file whose
 * folder is not listed (on another page) hangs at the top under its full name.
 */
export function fileTree(files: readonly ProjectFile[]): TreeEntry[] {
  const top: TreeEntry[] = [];
  const dirs = new Map<string, TreeEntry>();
  for (const f of files) {
    const cut = f.name.lastIndexOf('/');
    const parent = cut < 0 ? undefined : dirs.get(f.name.slice(0, cut));
    const base = cut < 0 || parent ? f.name.slice(cut + 1) : f.name;
    const entry: TreeEntry = { name: f.name, base, is_dir: f.is_dir, size: f.size, open: f.name.split('/').length <= 2, children: [] };
    (parent?.children ?? top).push(entry);
    if (f.is_dir) dirs.set(f.name, entry);
  }
  return top;
}

/** Entries of the file tree per page: rendering 100,000 at once held the daemon for seconds. */
export const FILES_PER_PAGE = 1000;

/** The `page` query parameter: 1-based, clamped to the pages there are. */
function pageNumber(raw: string, pages: number): number {
  const n = /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), Math.max(pages, 1));
}

async function filesPage(deps: ConsoleDeps, req: UiRequest) {
  const all = await deps.projects.listFiles(req.projectId, {});
  const pages = Math.ceil(all.length / FILES_PER_PAGE);
  const n = pageNumber(req.query('page'), pages);
  const from = (n - 1) * FILES_PER_PAGE;
  const entries = fileTree(all.slice(from, from + FILES_PER_PAGE));
  const paging = pages > 1 ? { first: from + 1, last: Math.min(from + FILES_PER_PAGE, all.length), total: all.length, ...(n > 1 ? { prev: n - 1 } : {}), ...(n < pages ? { next: n + 1 } : {}) } : undefined;
  const deleted = req.query('deleted');
  return page('files', { title: 'Files', nav: 'files', entries, ...(paging ? { paging } : {}), ...(deleted !== '' ? { notice: `Deleted ${deleted}.` } : {}) });
}

function requireName(req: UiRequest): string {
  const name = req.query('name') || req.form.get('name') || '';
  if (name === '') throw new EngineError('bad_request', 'which file? the "name" parameter is missing');
  return name;
}

type Projects = ConsoleDeps['projects'];

async function viewPage(projects: Projects, req: UiRequest, name: string, extra: { notice?: string; warnings?: readonly string[] } = {}) {
  const read = await projects.fileForReading(req.projectId, name);
  // A large file is not shown (nor read): the API's file/get streams it.
  const file = 'whole' in read ? read.whole : read.large;
  const large = !('whole' in read);
  const jobs = file.is_dir ? [] : await projects.listJobs(req.projectId, { file_name: file.name });
  const binary = file.encoding === 'base64';
  return page('fileView', {
    title: file.name,
    nav: 'files',
    file,
    jobs,
    binary,
    large,
    lines: binary || large ? [] : numberedLines(file.body ?? ''),
    ...(req.query('saved') === '1' ? { notice: 'Saved.' } : {}),
    ...(req.query('renamed') !== '' ? { notice: `Renamed from ${req.query('renamed')}.` } : {}),
    ...extra,
  });
}

async function editPage(projects: Projects, req: UiRequest) {
  const name = req.query('name');
  if (name === '') return page('fileEdit', { title: 'New file', nav: 'files', isNew: true, name: '', body: '' });
  const read = await projects.fileForReading(req.projectId, name);
  if (!('whole' in read)) throw new EngineError('bad_request', `${name} is ${read.large.size} bytes: files over ${STREAM_FILE_BYTES} bytes cannot be edited here`);
  const file = read.whole;
  if (file.is_dir || file.encoding === 'base64') throw new EngineError('bad_request', `${name} is ${file.is_dir ? 'a directory' : 'not UTF-8 text'}: it cannot be edited here`);
  return page('fileEdit', { title: `Edit ${name}`, nav: 'files', isNew: false, name, body: file.body ?? '' });
}

/** Saves through the API's service call; a refusal shows the editor again with the problems at their lines. */
async function save(projects: Projects, req: UiRequest) {
  const name = (req.form.get('name') ?? '').trim();
  const isNew = req.form.get('new') === '1';
  // Browsers send a textarea's line breaks as CRLF; the file keeps LF.
  const body = (req.form.get('body') ?? '').replace(/\r\n/g, '\n');
  try {
    if (isNew && name !== '' && (await projects.getFile(req.projectId, name).then(() => true, () => false))) {
      throw new EngineError('conflict', `a file named ${name} already exists: open it from the tree to edit it`);
    }
    const saved = await projects.saveFile(req.projectId, { name, body });
    if (saved.warnings && saved.warnings.length > 0) return viewPage(projects, req, saved.file.name, { notice: 'Saved.', warnings: saved.warnings });
    return redirect(viewUrl(saved.file.name, '&saved=1'));
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    const problems = (err as EngineError & { problems?: readonly Problem[] }).problems;
    const data = { title: isNew ? 'New file' : `Edit ${name}`, nav: 'files' as const, isNew, name, body };
    if (problems) return page('fileEdit', { ...data, problems, lines: numberedLines(body, problems) }, 422);
    return page('fileEdit', { ...data, error: errorChain(err) }, toHttpError(err).status);
  }
}

async function renameConfirm(projects: Projects, req: UiRequest) {
  const file = await projects.getFile(req.projectId, requireName(req));
  return page('confirm', {
    title: `Rename ${file.name}`,
    nav: 'files',
    heading: `Rename ${file.name}`,
    question: `Move ${file.is_dir ? 'the directory' : 'the file'} ${file.name} to a new name. Jobs that use it follow it.`,
    action: '/ui/files/rename',
    fields: [{ name: 'name', value: file.name }],
    input: { name: 'new_name', label: 'New name', value: file.name },
    button: 'Rename',
    back: viewUrl(file.name),
  });
}

async function rename(projects: Projects, req: UiRequest) {
  const from = requireName(req);
  const to = (req.form.get('new_name') ?? '').trim();
  await projects.renameFile(req.projectId, from, to);
  return redirect(viewUrl(to, `&renamed=${encodeURIComponent(from)}`));
}

async function deleteConfirm(projects: Projects, req: UiRequest) {
  const file = await projects.getFile(req.projectId, requireName(req));
  const under = file.is_dir ? (await projects.listFiles(req.projectId, { prefix: `${file.name}/` })).length : 0;
  return page('confirm', {
    title: `Delete ${file.name}`,
    nav: 'files',
    heading: `Delete ${file.name}?`,
    question: file.is_dir ? `This deletes the directory ${file.name} and the ${under} entries under it.` : `This deletes ${file.name}.`,
    detail: 'The default jobs of deleted job files are deleted with them; their executions are kept. This cannot be undone from here.',
    action: '/ui/files/delete',
    fields: [{ name: 'name', value: file.name }],
    button: 'Delete',
    buttonClass: 'danger',
    back: viewUrl(file.name),
  });
}

async function remove(projects: Projects, req: UiRequest) {
  const name = requireName(req);
  await projects.deleteFile(req.projectId, name);
  return redirect(`/ui/files?deleted=${encodeURIComponent(name)}`);
}

export function filePages(deps: ConsoleDeps): UiRoute[] {
  const { projects } = deps;
  const on = (handler: (projects: Projects, req: UiRequest) => ReturnType<UiRoute['handler']>) => (req: UiRequest) => handler(projects, req);
  return [
    { method: 'GET', pattern: /^\/ui\/files$/, handler: (req) => filesPage(deps, req) },
    { method: 'GET', pattern: /^\/ui\/files\/view$/, handler: (req) => viewPage(projects, req, requireName(req)) },
    { method: 'GET', pattern: /^\/ui\/files\/edit$/, handler: on(editPage) },
    { method: 'POST', pattern: /^\/ui\/files\/save$/, handler: on(save) },
    { method: 'GET', pattern: /^\/ui\/files\/rename$/, handler: on(renameConfirm) },
    { method: 'POST', pattern: /^\/ui\/files\/rename$/, handler: on(rename) },
    { method: 'GET', pattern: /^\/ui\/files\/delete$/, handler: on(deleteConfirm) },
    { method: 'POST', pattern: /^\/ui\/files\/delete$/, handler: on(remove) },
  ];
}
