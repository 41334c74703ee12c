/**
 * Project files: get, list, save, delete, rename. Names
 * follow the project file name rules; job files are validated on save and their default jobs follow
 * them (engine/projects).
 */
import { boolean, object, optional, string } from 'superstruct';
import type { ProjectService } from '../../engine/daemon-projects/index.js';
import { queryParam } from '../body.js';
import { fileJsonStream } from '../file-stream.js';
import { badRequest } from '../http-error.js';
import { listBody } from '../json-stream.js';
import { route, type Route } from '../route.js';
import { readOnly } from './schema.js';

export interface FilesDeps {
  readonly projects: ProjectService;
}

/** A required query parameter given once (a repeated one is a 400). */
export function requiredQuery(ctx: Parameters<typeof queryParam>[0], name: string): string {
  const v = queryParam(ctx, name);
  if (v === undefined) throw badRequest(`query parameter ${JSON.stringify(name)} is required`);
  return v;
}

const FileInput = object({
  name: string(),
  body: optional(string()),
  is_dir: optional(boolean()),
  encoding: optional(string()),
  updated: optional(readOnly()),
  size: optional(readOnly()),
});

export function fileRoutes(deps: FilesDeps): Route[] {
  const { projects } = deps;
  return [
    route({
      method: 'GET',
      path: '/project/file/get',
      summary: 'One file with its body (base64 with encoding when not UTF-8)',
      auth: true,
      query: [{ name: 'name', required: true, description: 'file name relative to the project root' }],
      handler: async ({ ctx, projectId }) => {
        const file = await projects.fileForReading(projectId, requiredQuery(ctx, 'name'));
        return 'whole' in file ? file.whole : fileJsonStream(file.large, file.path);
      },
    }),
    route({
      method: 'POST',
      path: '/project/file/list',
      summary: 'List files recursively, sorted by name, directories included',
      auth: true,
      body: object({ prefix: optional(string()), include_body: optional(boolean()) }),
      handler: async ({ projectId }, body) => listBody('files', await projects.listFiles(projectId, { prefix: body.prefix, includeBody: body.include_body })),
    }),
    route({
      method: 'POST',
      path: '/project/file/save',
      summary: 'Create or replace a file or create a directory; job files are validated and get a default job',
      auth: true,
      body: object({ file: FileInput }),
      handler: ({ projectId }, body) => {
        const { name, body: content, is_dir, encoding } = body.file;
        if (encoding !== undefined && encoding !== 'base64') throw badRequest('field "file.encoding" must be "base64"');
        return projects.saveFile(projectId, { name, body: content, is_dir, encoding });
      },
    }),
    route({
      method: 'POST',
      path: '/project/file/delete',
      summary: 'Delete a file or a directory with its subtree, and the default jobs of deleted job files',
      auth: true,
      body: object({ name: string() }),
      handler: ({ projectId }, body) => projects.deleteFile(projectId, body.name),
    }),
    route({
      method: 'POST',
      path: '/project/file/rename',
      summary: 'Move a file or directory; jobs referencing it follow',
      auth: true,
      body: object({ old_name: string(), new_name: string() }),
      handler: ({ projectId }, body) => projects.renameFile(projectId, body.old_name, body.new_name),
    }),
  ];
}
