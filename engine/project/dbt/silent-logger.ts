import type { Logger } from '../../log.js';

/** For reading installed packages: their own unused files are not the project's concern. */
export const silentLogger: Logger = { enabled: () => false, log: () => {} };
