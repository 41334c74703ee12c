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
 */
import { errorChain } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { QueryTable } from './query-session.js';

type Render = (extra: Readonly<Record<string, unknown>>) => string;

export class ParseGate {
  #open: { asked: boolean } | undefined;

  constructor(private readonly logger: Logger) {}

  /** The answer to a compile-time query while the gate is open (no rows); undefined: ask the database. */
  intercept(): QueryTable | undefined {
    if (this.#open === undefined) return undefined;
    this.#open.asked = true;
    return { columns: [], rows: [] };
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
      let out: string | undefined;
      try {
        out = once(already ? { execute: false } : {});
      } catch (err) {
        if (!d.asked) return this.parseOnly(err, once, already);
      }
      if (already || !d.asked) return { out: out!, deferred: already };
      try {
        return { out: once({ execute: false }), deferred: true };
      } catch {
        this.#open = undefined;
      }
      try {
        return { out: once({}), deferred: true };
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
  private parseOnly(err: unknown, once: Render, already: boolean): { out: string; deferred: boolean } {
    if (already) throw err;
    let out: string;
    try {
      out = once({ execute: false });
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
      once({ execute: false });
    } catch (err) {
      if (!d.asked) throw err;
      this.#open = undefined;
      const keep = reset();
      try {
        once({});
      } catch (again) {
        this.logger.log('debug', `${file}: parse render failed (rendered again when it runs): ${errorChain(again)}`);
        keep();
      }
    } finally {
      this.#open = undefined;
    }
  }
}
