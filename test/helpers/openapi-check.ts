/**
 * Every answer the API tests receive is checked against the published
 * OpenAPI document (ajv, JSON Schema 2020-12): a 200 against its route's
 * response schema, a 4xx/5xx against the Error schema. A mismatch throws in
 * the test that made the request, naming the route and the offending field.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function responseChecker(doc: Record<string, unknown>): (method: string, pathAndQuery: string, status: number, body: unknown) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, 'openapi');
  const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
  return (method, pathAndQuery, status, body) => {
    const path = pathAndQuery.split('?')[0]!;
    const op = paths[path]?.[method.toLowerCase()];
    if (op === undefined && status < 400) return; // not a documented route: nothing to check against
    const at = status >= 400 ? '#/components/schemas/Error' : `#/${pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
    if (status < 400 && op?.responses[String(status)] === undefined) throw new Error(`${method} ${path} answered ${status}, which /openapi.json does not document`);
    const validate = ajv.getSchema(`openapi${at}`);
    if (!validate) throw new Error(`no schema at ${at}`);
    if (!validate(body)) throw new Error(`${method} ${path} ${status}: the answer does not match /openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
  };
}
