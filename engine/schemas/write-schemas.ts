/** `npm run schemas`: rewrites schemas/*.schema.json from the shape structs. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_SCHEMAS, renderSchema } from './file-schemas.js';

const dir = join(import.meta.dirname, '..', '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const f of FILE_SCHEMAS) writeFileSync(join(dir, f.file), renderSchema(f));
