/**
 * Job-file problems. Validators report problems as they meet
 * them, each with the source offset it is about; the collector sorts by that
 * offset at the end so the list is in document order however the checks were
 * grouped (a cross-field check on a stream runs after its keys were read).
 */

export interface Problem {
  /** `streams["public.users"].mode`, `steps[2].type`, `""` for the whole file. */
  readonly path: string;
  readonly message: string;
  /** 1-based, present when known. */
  readonly line?: number;
  readonly column?: number;
}

/** One step of a path: a mapping key or a list position. */
export type PathSeg = string | number;

/** Keys that read unambiguously after a dot; anything else is written `["…"]`. */
const PLAIN_KEY = /^[^.[\]"\s]+$/;

export function formatPath(segs: readonly PathSeg[]): string {
  let out = '';
  for (const seg of segs) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

export interface LinePos {
  readonly line: number;
  readonly column: number;
}

interface Pending {
  readonly problem: Problem;
  readonly offset: number;
  readonly seq: number;
}

/**
 * Collects problems with their offsets. `lineOf` turns an offset into a
 * 1-based line and column; a problem without an offset has no position and
 * sorts last.
 */
export class ProblemList {
  private readonly pending: Pending[] = [];

  constructor(private readonly lineOf: (offset: number) => LinePos) {}

  add(path: readonly PathSeg[] | string, message: string, offset?: number): void {
    const p = typeof path === 'string' ? path : formatPath(path);
    const problem: Problem =
      offset === undefined ? { path: p, message } : { path: p, message, ...this.lineOf(offset) };
    this.pending.push({ problem, offset: offset ?? Number.POSITIVE_INFINITY, seq: this.pending.length });
  }

  get size(): number {
    return this.pending.length;
  }

  list(): Problem[] {
    return [...this.pending].sort((a, b) => a.offset - b.offset || a.seq - b.seq).map((x) => x.problem);
  }
}

/** Line/column lookup over a text by binary search on line starts. */
export function lineIndex(text: string): (offset: number) => LinePos {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset: number): LinePos => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}
