/**
 * Per-type reading of pipeline steps:
 * required keys, value types, enums, ranges, referenced project files and
 * connection kinds. The common keys, type detection, ids, goto and
 * templates are handled by pipeline-validate.ts before a reader runs.
 */
import { classifyJobFile } from './classify.js';
import { checkExpression } from './expression-check.js';
import {
  connectionKindOf, isNull, isRunTimeValue, quote, readBool, readEnum, readEnvMap, readInt, readIntBetween, readMap,
  readString, readStringList, readStringOrList, type Scope,
} from './fields.js';
import { checkProjectFile, fileRefPath } from './file-ref.js';
import {
  BUILD_COMMANDS, HTTP_DEFAULT_TIMEOUT, HTTP_METHODS, LOG_LEVELS, MAX_GROUP_CONCURRENCY, MAX_TIMEOUT_SECONDS,
  type BuildStep, type CheckStep, type CommandStep, type GroupStep, type HttpStep, type LogStep, type PipelineStep,
  type QueryStep, type ReadStep, type ReplicationStep, type SetStep, type StepType, type WriteStep,
} from './pipeline-model.js';
import type { PathSeg } from './problem.js';
import { REPLICATION_MODES, type ReplicationMode } from './replication-model.js';
import { splitSelectors } from '../dag/select.js';
import { isTemplateExpression } from './template.js';
import { plainValue, type YEntry, type YMap } from './yaml-tree.js';

type Base = 'id' | 'name' | 'if' | 'on_failure' | 'goto' | 'position';
export type StepFields<T extends PipelineStep = PipelineStep> = Omit<T, Base>;

export interface StepInput {
  readonly s: Scope;
  readonly map: YMap;
  readonly entries: ReadonlyMap<string, YEntry>;
  readonly path: readonly PathSeg[];
  /** Validates a nested `steps` list (group steps). */
  readonly children: (e: YEntry, path: readonly PathSeg[]) => PipelineStep[];
}

type Reader = (r: StepInput) => StepFields;

/** The entry of a required key (or its alias), else `step type <t> requires "<k>"` on the step. */
function required(r: StepInput, type: StepType, key: string, alias?: string): YEntry | undefined {
  for (const k of alias === undefined ? [key] : [key, alias]) {
    const e = r.entries.get(k);
    if (e !== undefined && !isNull(e.value)) return e;
  }
  r.s.problems.add(r.path, `step type ${type} requires ${quote(key)}`, r.map.offset);
  return undefined;
}

const str = (r: StepInput, key: string): string | undefined => readString(r.s, r.entries.get(key), r.path);
const bool = (r: StepInput, key: string): boolean | undefined => readBool(r.s, r.entries.get(key), r.path);
const plainMap = (r: StepInput, key: string): Record<string, unknown> | undefined => {
  const m = readMap(r.s, r.entries.get(key), r.path);
  return m === undefined ? undefined : (plainValue(m) as Record<string, unknown>);
};
const timeout = (r: StepInput): number | undefined => readIntBetween(r.s, r.entries.get('timeout'), r.path, 1, MAX_TIMEOUT_SECONDS);

/** Adds the defined values of `extra` to `base`, so absent keys stay absent. */
function defined<T extends object>(base: T, extra: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** `CONNECTION/path` of write `to` and read `from`; checks the connection is a file connection when known. */
function connectionPath(r: StepInput, key: string, verb: string): string | undefined {
  const e = r.entries.get(key);
  const v = readString(r.s, e, r.path);
  if (v === undefined || e === undefined || isRunTimeValue(v)) return v;
  const m = /^([^/]+)\/(.+)$/.exec(v);
  if (m === null) {
    r.s.problems.add([...r.path, key], `${quote(key)} must be CONNECTION/path`, e.value.offset);
    return v;
  }
  const kind = connectionKindOf(r.s, m[1]);
  if (kind !== undefined && kind !== 'file') {
    r.s.problems.add([...r.path, key], `${verb} connection ${m[1]} must be a file connection`, e.value.offset);
  }
  return v;
}

const readLog: Reader = (r) => {
  const e = required(r, 'log', 'message', 'log');
  const message = e === undefined ? '' : (readString(r.s, e, r.path) ?? '');
  return { type: 'log', message, level: readEnum(r.s, r.entries.get('level'), r.path, LOG_LEVELS) ?? 'info' } satisfies StepFields<LogStep>;
};

function readReplicationPath(r: StepInput, e: YEntry): string {
  const v = readString(r.s, e, r.path);
  if (v === undefined) return '';
  const file = fileRefPath(v) ?? v;
  const at = [...r.path, 'path'];
  if (!checkProjectFile(r.s, file, at, e.value.offset)) return v;
  const content = r.s.ctx.readFile?.(file);
  if (content !== undefined && classifyJobFile(file, content).kind !== 'replication') {
    r.s.problems.add(at, `${quote(v)} is not a replication file`, e.value.offset);
  }
  return v;
}

const readReplication: Reader = (r) => {
  const e = required(r, 'replication', 'path');
  const modeEntry = r.entries.get('mode');
  const mode = readString(r.s, modeEntry, r.path);
  if (mode !== undefined && modeEntry !== undefined && !(REPLICATION_MODES as readonly string[]).includes(mode)) {
    r.s.problems.add([...r.path, 'mode'], `unknown mode ${quote(mode)}; expected one of ${REPLICATION_MODES.join(', ')}`, modeEntry.value.offset);
  }
  return defined({ type: 'replication', path: e === undefined ? '' : readReplicationPath(r, e) } satisfies StepFields<ReplicationStep>, {
    streams: readStringList(r.s, r.entries.get('streams'), r.path),
    mode: mode as ReplicationMode | undefined,
    vars: plainMap(r, 'vars'),
  });
};

const readQuery: Reader = (r) => {
  const c = required(r, 'query', 'connection');
  const q = required(r, 'query', 'query');
  const connection = c === undefined ? undefined : readString(r.s, c, r.path);
  const kind = connectionKindOf(r.s, connection);
  if (c !== undefined && kind !== undefined && kind !== 'database') {
    r.s.problems.add([...r.path, 'connection'], `query connection ${connection} must be a database connection`, c.value.offset);
  }
  const query = q === undefined ? undefined : readString(r.s, q, r.path);
  return { type: 'query', connection: connection ?? '', query: query ?? '' } satisfies StepFields<QueryStep>;
};

const readBuild: Reader = (r) => {
  const e = required(r, 'build', 'build');
  const dir = e === undefined ? undefined : readString(r.s, e, r.path);
  if (dir !== undefined && e !== undefined) checkProjectFile(r.s, fileRefPath(dir) ?? dir, [...r.path, 'build'], e.value.offset, true);
  let command = readEnum(r.s, r.entries.get('command'), r.path, BUILD_COMMANDS);
  const test = bool(r, 'test');
  const testEntry = r.entries.get('test');
  if (test === true && command !== undefined && command !== 'test' && testEntry !== undefined) {
    r.s.problems.add([...r.path, 'test'], `build step: 'test: true' conflicts with command '${command}'`, testEntry.keyOffset);
  }
  if (test === true) command = 'test';
  const prod = bool(r, 'prod');
  const schema = str(r, 'schema');
  const schemaEntry = r.entries.get('schema');
  if (prod === true && schema !== undefined && schemaEntry !== undefined) {
    r.s.problems.add([...r.path, 'schema'], '"prod" and "schema" cannot be combined', schemaEntry.keyOffset);
  }
  const rangeEntry = r.entries.get('range');
  const range = str(r, 'range');
  if (range !== undefined && rangeEntry !== undefined && !isRunTimeValue(range) && ![2, 3].includes(range.split(',').length)) {
    r.s.problems.add([...r.path, 'range'], '"range" must be "start,end[,step]"', rangeEntry.value.offset);
  }
  const select = readStringOrList(r.s, r.entries.get('select'), r.path);
  const exclude = readStringOrList(r.s, r.entries.get('exclude'), r.path);
  return defined({ type: 'build', build: dir ?? '', command: command ?? 'run' } satisfies StepFields<BuildStep>, {
    target: str(r, 'target'),
    select: select === undefined ? undefined : splitSelectors(select),
    exclude: exclude === undefined ? undefined : splitSelectors(exclude),
    vars: plainMap(r, 'vars'),
    env: readEnvMap(r.s, r.entries.get('env'), r.path),
    schema,
    prod,
    full_refresh: bool(r, 'full_refresh'),
    no_seeds: bool(r, 'no_seeds'),
    range,
    fail_fast: bool(r, 'fail_fast'),
    threads: readInt(r.s, r.entries.get('threads'), r.path),
    recursive: bool(r, 'recursive'),
  });
};

function readHeaders(r: StepInput): Record<string, string> | undefined {
  const map = readMap(r.s, r.entries.get('headers'), r.path);
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const h of map.entries) {
    const v = readString(r.s, h, [...r.path, 'headers']);
    if (v !== undefined) Object.defineProperty(out, h.key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

const readHttp: Reader = (r) => {
  const e = required(r, 'http', 'url');
  const p = r.entries.get('payload');
  let payload: unknown;
  if (p !== undefined && !isNull(p.value)) {
    if (p.value.kind === 'map' || (p.value.kind === 'scalar' && typeof p.value.value === 'string')) payload = plainValue(p.value);
    else r.s.problems.add([...r.path, 'payload'], '"payload" must be a string or a mapping', p.value.offset);
  }
  return defined({
    type: 'http',
    url: (e === undefined ? undefined : readString(r.s, e, r.path)) ?? '',
    method: readEnum(r.s, r.entries.get('method'), r.path, HTTP_METHODS) ?? 'GET',
    timeout: timeout(r) ?? HTTP_DEFAULT_TIMEOUT,
  } satisfies StepFields<HttpStep>, { headers: readHeaders(r), payload });
};

const readCommand: Reader = (r) => {
  const e = required(r, 'command', 'command');
  let command: string | string[] = '';
  if (e !== undefined) {
    if (e.value.kind === 'scalar' && typeof e.value.value === 'string') command = e.value.value;
    else command = readStringList(r.s, e, r.path) ?? '';
  }
  return defined({ type: 'command', command } satisfies StepFields<CommandStep>, {
    working_dir: str(r, 'working_dir'),
    env: readEnvMap(r.s, r.entries.get('env'), r.path),
    timeout: timeout(r),
  });
};

/** An expression key (`if`, `check`): an expression string or a YAML boolean. */
export function readCondition(r: Pick<StepInput, 's' | 'path'>, e: YEntry | undefined): string | boolean | undefined {
  if (e === undefined || isNull(e.value)) return undefined;
  const v = e.value.kind === 'scalar' ? e.value.value : undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    checkExpression(r.s, v, [...r.path, e.key], e.value.offset);
    return v;
  }
  r.s.problems.add([...r.path, e.key], `${quote(e.key)} must be an expression`, e.value.offset);
  return undefined;
}

const readCheck: Reader = (r) => {
  const e = required(r, 'check', 'check');
  return defined({ type: 'check', check: readCondition(r, e) ?? false } satisfies StepFields<CheckStep>, {
    failure_message: str(r, 'failure_message'),
  });
};

function readLoop(r: StepInput): string | unknown[] | undefined {
  const e = r.entries.get('loop');
  if (e === undefined || isNull(e.value)) return undefined;
  if (e.value.kind === 'seq') return plainValue(e.value) as unknown[];
  if (e.value.kind === 'scalar' && typeof e.value.value === 'string') {
    const text = e.value.value;
    const whole = /^\s*\{([^]*)\}\s*$/.exec(text);
    const inner = whole !== null && isTemplateExpression(whole[1]!) ? whole[1]! : text;
    checkExpression(r.s, inner, [...r.path, 'loop'], e.value.offset);
    return text;
  }
  r.s.problems.add([...r.path, 'loop'], '"loop" must be a list or an expression', e.value.offset);
  return undefined;
}

const readGroup: Reader = (r) => {
  const e = required(r, 'group', 'steps');
  return defined({
    type: 'group',
    steps: e === undefined ? [] : r.children(e, [...r.path, 'steps']),
    concurrency: readIntBetween(r.s, r.entries.get('concurrency'), r.path, 1, MAX_GROUP_CONCURRENCY) ?? 1,
  } satisfies StepFields<GroupStep>, { loop: readLoop(r) });
};

const readSet: Reader = (r) => {
  const key = str(r, 'key');
  const map = plainMap(r, 'map');
  const del = bool(r, 'delete');
  const valueEntry = r.entries.get('value');
  const keyEntry = r.entries.get('key');
  if (map !== undefined && keyEntry !== undefined) {
    r.s.problems.add([...r.path, 'key'], '"map" and "key" cannot be combined', keyEntry.keyOffset);
  } else if (map === undefined && r.entries.get('map') === undefined) {
    if (keyEntry === undefined || isNull(keyEntry.value)) required(r, 'set', 'key');
    else if (valueEntry === undefined && del !== true) required(r, 'set', 'value');
  }
  return defined({ type: 'set' } satisfies StepFields<SetStep>, {
    key,
    value: valueEntry === undefined ? undefined : plainValue(valueEntry.value),
    map,
    delete: del,
  });
};

const readWrite: Reader = (r) => {
  const to = required(r, 'write', 'to') === undefined ? undefined : connectionPath(r, 'to', 'write');
  const c = required(r, 'write', 'content');
  return { type: 'write', to: to ?? '', content: c === undefined ? '' : plainValue(c.value) } satisfies StepFields<WriteStep>;
};

const readRead: Reader = (r) => {
  const e = required(r, 'read', 'from');
  const v = e === undefined ? undefined : readString(r.s, e, r.path);
  const from = v !== undefined && fileRefPath(v) === undefined ? connectionPath(r, 'from', 'read') : v;
  return { type: 'read', from: from ?? '' } satisfies StepFields<ReadStep>;
};

export const STEP_READERS: Readonly<Record<StepType, Reader>> = {
  log: readLog,
  replication: readReplication,
  query: readQuery,
  build: readBuild,
  http: readHttp,
  command: readCommand,
  check: readCheck,
  group: readGroup,
  set: readSet,
  write: readWrite,
  read: readRead,
};
