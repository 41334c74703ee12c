/** The product's version: `service --version`, `/health`, the OpenAPI document, a cluster daemon's record. */
export const VERSION = '0.1.0';
