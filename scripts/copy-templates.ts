/**
 * Part of `npm run build`: the console's Handlebars templates
 * (http/ui/templates/*.hbs) go beside their compiled loader in dist/, which
 * reads them from its own folder (http/ui/templates/index.ts); tsc copies
 * only what it compiles.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const from = join(import.meta.dirname, '..', 'http', 'ui', 'templates');
const to = join(import.meta.dirname, '..', 'dist', 'http', 'ui', 'templates');
mkdirSync(to, { recursive: true });
for (const name of readdirSync(from)) if (name.endsWith('.hbs')) copyFileSync(join(from, name), join(to, name));
