/**
 * The OpenAPI document a daemon serves documents only what that daemon
 * serves: without cluster mode there is no operator token and no `Daemon`
 * schema (unused components are lint warnings), and every component schema
 * left is referenced.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VERSION } from '../engine/version.js';
import { clusterRoutes } from '../http/routes/cluster.js';
import { gitRoutes } from '../http/routes/git.js';
import { apiRoutes, type ApiDeps } from '../http/routes/index.js';

const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not called')) });

async function served(cluster: boolean): Promise<any> {
  const extraRoutes = [...gitRoutes({ git: unused as never }), ...(cluster ? clusterRoutes({ self: '', daemons: unused as never, operatorDigestKnown: unused as never }) : [])];
  const routes = apiRoutes({ version: VERSION, store: unused, projects: unused, executions: unused, connections: () => unused, extraRoutes } as unknown as ApiDeps);
  return routes.find((r) => r.path === '/openapi.json')!.handler({ ctx: undefined as never, projectId: '' }, {});
}

const referenced = (doc: any) => {
  const names = new Set<string>();
  for (const m of JSON.stringify({ paths: doc.paths, schemas: doc.components.schemas }).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) names.add(m[1]!);
  return names;
};

test('a single daemon documents no operator token and no Daemon; every schema is referenced', async () => {
  const doc = await served(false);
  assert.deepEqual(Object.keys(doc.components.securitySchemes), ['projectToken']);
  assert.equal('Daemon' in doc.components.schemas, false);
  assert.equal('/cluster' in doc.paths, false);
  assert.deepEqual(Object.keys(doc.components.schemas).filter((n) => !referenced(doc).has(n)), []);
});

test('a cluster daemon documents GET /cluster with its operator token and the Daemon schema', async () => {
  const doc = await served(true);
  assert.deepEqual(Object.keys(doc.components.securitySchemes), ['projectToken', 'operatorToken']);
  assert.ok('Daemon' in doc.components.schemas);
  assert.deepEqual(doc.paths['/cluster'].get.security, [{ operatorToken: [] }]);
  assert.deepEqual(Object.keys(doc.components.schemas).filter((n) => !referenced(doc).has(n)), []);
});
