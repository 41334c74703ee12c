/**
 * The steps that touch no database: `log`, `check`, `set`,
 * `write` and `read`.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EngineError } from '../../errors.js';
import { fileRefPath, type CheckStep, type LogStep, type ReadStep, type SetStep, type WriteStep } from '../../jobs/index.js';
import { StepFailure, type StepContext } from '../context.js';
import { evaluateSource, toJson, truthy, type Value } from '../evaluate.js';
import { connectionFile, projectPath } from '../paths.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

export async function runLog(step: LogStep, x: StepContext): Promise<Value> {
  const message = x.text(step.message);
  x.log(step.level === 'info' ? message : `${step.level}: ${message}`);
  return { message };
}

export async function runCheck(step: CheckStep, x: StepContext): Promise<Value> {
  const source = typeof step.check === 'boolean' ? String(step.check) : step.check;
  const result = typeof step.check === 'boolean' ? step.check : truthy(evaluateSource(x.expression(step.check), x.scope));
  x.log(`check ${source}: ${result}`);
  if (!result) {
    const message = step.failure_message !== undefined ? x.text(step.failure_message) : `check failed: ${source}`;
    throw new StepFailure(message, { result });
  }
  return { result };
}

function storeKey(key: string): string {
  if (key === '' || FORBIDDEN_KEYS.has(key)) throw new EngineError('node', `invalid store key ${JSON.stringify(key)}`);
  return key;
}

/** A copy is stored, so `value: '{store}'` cannot make the store contain itself. */
function put(store: Record<string, Value>, key: string, value: Value): void {
  Object.defineProperty(store, storeKey(key), { value: structuredClone(value), enumerable: true, writable: true, configurable: true });
}

export async function runSet(step: SetStep, x: StepContext): Promise<Value> {
  const store = x.scopes.store;
  if (step.map !== undefined) {
    const values = Object.entries(step.map).map(([k, v]) => [x.text(k), x.deep(v, true)] as const);
    for (const [k, v] of values) {
      put(store, k, v);
      x.log(`store.${k} = ${toJson(v)}`);
    }
  } else if (step.key !== undefined) {
    const key = storeKey(x.text(step.key));
    if (step.delete === true) {
      delete store[key];
      x.log(`store.${key} deleted`);
    } else {
      const v = x.deep(step.value ?? null, true);
      put(store, key, v);
      x.log(`store.${key} = ${toJson(v)}`);
    }
  }
  return {};
}

export async function runWrite(step: WriteStep, x: StepContext): Promise<Value> {
  const target = connectionFile(x.connections, x.text(step.to), 'to');
  const rendered = x.deep(step.content, false);
  const content = typeof rendered === 'string' ? rendered : toJson(rendered);
  await mkdir(path.dirname(target.abs), { recursive: true });
  await writeFile(target.abs, content);
  const bytes = Buffer.byteLength(content);
  x.log(`wrote ${bytes} byte(s) to ${target.connection}/${path.relative(target.root, target.abs)}`);
  return { location: target.abs, bytes };
}

export async function runRead(step: ReadStep, x: StepContext): Promise<Value> {
  const from = x.text(step.from);
  const ref = fileRefPath(from);
  const abs = ref !== undefined ? projectPath(x.projectRoot, ref) : connectionFile(x.connections, from, 'from').abs;
  let content: Buffer;
  try {
    if (!(await stat(abs)).isFile()) throw new Error('not a file');
    content = await readFile(abs);
  } catch {
    throw new EngineError('node', `file ${JSON.stringify(ref ?? from)} does not exist`);
  }
  x.log(`read ${content.length} byte(s) from ${from}`);
  return { content: content.toString('utf8'), bytes: content.length };
}
