/**
 * Pipeline file validation: the steps list at every level,
 * step type detection, keys allowed per type, the common keys (ids unique in
 * the whole file, goto targets among siblings, `if` expressions), templates
 * in step strings, then the per-type reader of pipeline-steps.ts.
 */
import { checkStrings } from './expression-check.js';
import { PipelineShape } from './job-file-shapes.js';
import { keysOf } from '../schemas/shape.js';
import { isNull, knownEntries, quote, readEnum, readEnvMap, readString, requireEntry, type Scope } from './fields.js';
import {
  COMMON_STEP_KEYS, ON_FAILURE, STEP_ID, STEP_KEYS, STEP_TYPES, TYPE_NAMING_KEYS,
  type PipelineFile, type PipelineStep, type StepType,
} from './pipeline-model.js';
import { STEP_READERS, readCondition } from './pipeline-steps.js';
import type { PathSeg } from './problem.js';
import type { YEntry, YMap, YNode } from './yaml-tree.js';

const TOP_KEYS = keysOf(PipelineShape);
/** Step keys whose strings are not templates: names, enums, expressions, nested steps. */
const NOT_TEMPLATES = new Set(['type', 'id', 'goto', 'on_failure', 'if', 'check', 'level', 'method', 'mode', 'steps']);
/** Keys whose `file://` strings are not project files: variables, or checked by their reader. */
const NO_FILE_REFS = new Set(['env', 'vars', 'build', 'path']);

function scalarText(node: YNode): string {
  return node.kind === 'scalar' ? String(node.value) : '';
}

function stepType(s: Scope, map: YMap, path: readonly PathSeg[]): StepType | undefined {
  const t = map.entries.find((e) => e.key === 'type');
  if (t !== undefined && !isNull(t.value)) {
    const v = t.value.kind === 'scalar' ? t.value.value : undefined;
    if (typeof v === 'string' && (STEP_TYPES as readonly string[]).includes(v)) return v as StepType;
    s.problems.add([...path, 'type'], `unknown step type ${quote(scalarText(t.value))}`, t.value.offset);
    return undefined;
  }
  const keys = new Set(map.entries.map((e) => e.key));
  if (keys.has('build')) return 'build';
  const naming = TYPE_NAMING_KEYS.filter((k) => keys.has(k));
  if (naming.length === 1) return naming[0];
  s.problems.add(path, 'step type cannot be determined; set "type"', map.offset);
  return undefined;
}

class StepWalker {
  private readonly ids = new Set<string>();

  constructor(private readonly s: Scope) {}

  /** A `steps` list (top level or a group's) at `path`. */
  list(node: YNode, path: readonly PathSeg[]): PipelineStep[] {
    if (node.kind !== 'seq' || node.items.length === 0) {
      this.s.problems.add(path, '"steps" must be a non-empty list', node.offset);
      return [];
    }
    const steps: PipelineStep[] = [];
    const levelIds = new Set<string>();
    const gotos: { entry: YEntry; path: PathSeg[] }[] = [];
    node.items.forEach((item, i) => {
      const at = [...path, i];
      if (item.kind !== 'map') {
        this.s.problems.add(at, 'step must be a mapping', item.offset);
        return;
      }
      const step = this.step(item, at, i + 1, levelIds);
      const g = item.entries.find((e) => e.key === 'goto');
      if (g !== undefined && !isNull(g.value)) gotos.push({ entry: g, path: [...at, 'goto'] });
      if (step !== undefined) steps.push(step);
    });
    for (const g of gotos) {
      const target = g.entry.value.kind === 'scalar' ? g.entry.value.value : undefined;
      if (typeof target === 'string' && !levelIds.has(target)) {
        this.s.problems.add(g.path, `goto target ${quote(target)} does not exist`, g.entry.value.offset);
      }
    }
    return steps;
  }

  private readId(e: YEntry | undefined, path: readonly PathSeg[], levelIds: Set<string>): string | undefined {
    if (e === undefined || isNull(e.value)) return undefined;
    const v = e.value.kind === 'scalar' ? e.value.value : undefined;
    if (typeof v !== 'string' || !STEP_ID.test(v)) {
      this.s.problems.add([...path, 'id'], `invalid step id ${quote(scalarText(e.value))}`, e.value.offset);
      return undefined;
    }
    if (this.ids.has(v)) this.s.problems.add([...path, 'id'], `duplicate step id ${quote(v)}`, e.value.offset);
    this.ids.add(v);
    levelIds.add(v);
    return v;
  }

  private step(map: YMap, path: readonly PathSeg[], position: number, levelIds: Set<string>): PipelineStep | undefined {
    const s = this.s;
    const type = stepType(s, map, path);
    const entries =
      type === undefined
        ? new Map(map.entries.map((e) => [e.key, e] as const))
        : knownEntries(s, map, path, new Set([...COMMON_STEP_KEYS, ...STEP_KEYS[type]]), (k) => `unknown key ${quote(k)} for step type ${type}`);
    const id = this.readId(entries.get('id'), path, levelIds);
    const name = readString(s, entries.get('name'), path);
    const cond = readCondition({ s, path }, entries.get('if'));
    const onFailure = readEnum(s, entries.get('on_failure'), path, ON_FAILURE);
    const goto = readString(s, entries.get('goto'), path);
    if (type === undefined) return undefined;

    for (const e of entries.values()) {
      const isEnum = NOT_TEMPLATES.has(e.key) || (type === 'build' && e.key === 'command');
      if (!isEnum && !(e.key === 'loop' && e.value.kind === 'scalar')) checkStrings(s, e.value, [...path, e.key], !NO_FILE_REFS.has(e.key));
    }
    const fields = STEP_READERS[type]({ s, map, entries, path, children: (e, p) => this.list(e.value, p) });
    const base: Record<string, unknown> = { position, on_failure: onFailure ?? 'abort' };
    if (id !== undefined) base.id = id;
    if (name !== undefined) base.name = name;
    if (cond !== undefined) base.if = cond;
    if (goto !== undefined) base.goto = goto;
    return { ...fields, ...base } as PipelineStep;
  }
}

export function validatePipeline(s: Scope, root: YMap): PipelineFile {
  const entries = knownEntries(s, root, [], TOP_KEYS);
  const env = readEnvMap(s, entries.get('env'), []) ?? {};
  const e = requireEntry(s, root, entries, 'steps');
  const steps = e === undefined ? [] : new StepWalker(s).list(e.value, ['steps']);
  return { kind: 'pipeline', env, steps };
}
