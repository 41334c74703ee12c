/**
 * dbt's parse, as the loader renders a dbt project: while a gate is open,
 * a compile-time query (`run_query`, `statement`, `adapter.get_relation` …)
 * is not sent to the database — it is noted and answered with no rows — and
 * the node it came from is `deferred`: rendered with `execute` false at load
 * and again, with `execute` true, on the thread that runs it, after its
 * parents are built (live-render.ts). A template that does not guard on
 * `execute` and fails on the empty answer is given real answers at load, as
 * before; one that fails at load whichever way is left to its render when
 * it runs, which reports the error if there is one.
 *
 * A node may render up to three times here; what its templates log
 * (`log(…, info=True)`, `exceptions.warn`) is shown only for the render
 * whose SQL is kept, so a message computed from the empty answers of a
 * try is not printed.
 */
import { errorChain } from '../../errors.js';
import type { Level, Logger } from '../../log.js';
import type { QueryTable } from './compile-time-query/query-session.js';

type Render = (extra: Readonly<Record<string, unknown>>) => string;

export class ParseGate {
  #open: { asked: boolean } | undefined;
  #held: [Level, string][] | undefined;

  /** The logger a template's `log()` writes to: held back while a render is a try. */
  readonly templateLogger: Logger;

  constructor(private readonly logger: Logger) {
    this.templateLogger = {
      enabled: (level) => logger.enabled(level),
      log: (level, message) => (this.#held ? this.#held.push([level, message]) : logger.log(level, message)),
    };
  }

  /** The answer to a compile-time query while the gate is open (no rows); undefined: ask the database. */
  intercept(): QueryTable | undefined {
    if (this.#open === undefined) return undefined;
    this.#open.asked = true;
    return { columns: [], rows: [] };
  }

  /** One try of a render: its log lines are held until the caller keeps them (`kept`) or drops them. */
  #try(once: Render, extra: Readonly<Record<string, unknown>>): { out: string; kept: () => string } {
    const held: [Level, string][] = [];
    const outer = this.#held;
    this.#held = held;
    try {
      const out = once(extra);
      return {
        out,
        kept: () => {
          for (const [level, message] of held) this.logger.log(level, message);
          return out;
        },
      };
    } finally {
      this.#held = outer;
    }
  }

  /**
   * A node's render at load: first with `execute` true and queries noted; a
   * node that asked renders again with `execute` false. `already`: the node is
   * known to ask (its other form was rendered): `execute` false at once.
   * The refs seen with `execute` true stay dependencies (a ref inside
   * `{% if execute %}` is one too), so `once` must not reset them.
   */
  render(file: string, once: Render, already = false): { out: string; deferred: boolean } {
    const d = { asked: false };
    this.#open = d;
    try {
      let first: { out: string; kept: () => string } | undefined;
      try {
        first = this.#try(once, already ? { execute: false } : {});
      } catch (err) {
        if (!d.asked) return this.#parseOnly(err, once, already);
      }
      if (already || !d.asked) return { out: first!.kept(), deferred: already };
      try {
        return { out: this.#try(once, { execute: false }).kept(), deferred: true };
      } catch {
        this.#open = undefined;
      }
      try {
        return { out: this.#try(once, {}).kept(), deferred: true };
      } catch (err) {
        this.logger.log('debug', `${file}: parse render failed (rendered again when it runs): ${errorChain(err)}`);
        return { out: '', deferred: true };
      }
    } finally {
      this.#open = undefined;
    }
  }

  /**
   * A render that fails with `execute` true without asking the database
   * (`{% if execute %}{{ exceptions.raise_compiler_error(…) }}`) parses as
   * dbt's does, with `execute` false, and fails only when the node runs.
   */
  #parseOnly(err: unknown, once: Render, already: boolean): { out: string; deferred: boolean } {
    if (already) throw err;
    let out: string;
    try {
      out = this.#try(once, { execute: false }).kept();
    } catch {
      throw err;
    }
    return { out, deferred: true };
  }

  /**
   * The first render of a model (to learn its config() calls, refs still
   * placeholders): `execute` false; a template that fails on an empty answer
   * gets real ones; if it fails anyway, `keep` restores what it configured so far.
   */
  configs(file: string, once: Render, reset: () => () => void): void {
    const d = { asked: false };
    this.#open = d;
    try {
      this.#try(once, { execute: false });
    } catch (err) {
      if (!d.asked) throw err;
      this.#open = undefined;
      const keep = reset();
      try {
        this.#try(once, {});
      } catch (again) {
        this.logger.log('debug', `${file}: parse render failed (rendered again when it runs): ${errorChain(again)}`);
        keep();
      }
    } finally {
      this.#open = undefined;
    }
  }
}
