/** Public surface of connection loading. */
export * from './connection.js';
export { loadConnections, readEnvFile, envVarConnections, registryOf, snapshotConnections } from './load-connections.js';
export type { ConnectionRegistry, EnvFileContent, EnvFileProblem, LoadConnectionsOptions } from './load-connections.js';
export { connectionFromEntry, connectionFromUrl, connectionUrlType } from './parse-entry.js';
export { redact } from './redact.js';
export { atWorkingDir, registryAtWorkingDir } from './working-dir.js';
