/** Every console template by name; names starting with `_` are partials. */
import { _buildNodes, executions, execution } from './executions.js';
import { _fileTree, fileEdit, files, fileView } from './files.js';
import { _executionTable, job, jobs } from './jobs.js';
import { confirm, error, layout, signIn } from './layout.js';
import { lineageGraph, lineageIndex, lineageNode } from './lineage.js';
import { overview } from './overview.js';
import { search } from './search.js';

export const TEMPLATES = { layout, signIn, error, confirm, overview, jobs, job, _executionTable, executions, execution, _buildNodes, files, _fileTree, fileView, fileEdit, lineageIndex, lineageGraph, lineageNode, search } as const;
