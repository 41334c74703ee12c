/**
 * Every console template by name, one `<name>.hbs` file beside this module
 * (names starting with `_` are partials), read once at start. The build
 * copies the `.hbs` files next to the compiled module (scripts/copy-templates.ts),
 * so the same lookup works under tsx and from dist/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const NAMES = ['layout', 'signIn', 'error', 'confirm', 'overview', 'jobs', 'job', '_executionTable', 'executions', 'execution', '_buildNodes', 'files', '_fileTree', 'fileView', 'fileEdit', 'lineageIndex', 'lineageGraph', 'lineageNode', 'search'] as const;

export type TemplateName = (typeof NAMES)[number];

export const TEMPLATES: Readonly<Record<TemplateName, string>> = Object.fromEntries(NAMES.map((name) => [name, readFileSync(join(import.meta.dirname, `${name}.hbs`), 'utf8')])) as Record<TemplateName, string>;
