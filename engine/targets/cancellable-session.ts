/**
 * Runs work on a fresh session of a target so that an abort of `signal`
 * stops the statement in flight (`Target.cancel`, on SIGINT) and the work then
 * fails with `cancelled`. The session is closed afterwards; the target stays
 * open (its owner closes it). Every host that runs statements for a task —
 * worker tasks, daemon query and monitor work, pipeline query steps — goes
 * through here.
 */
import { EngineError } from '../errors.js';
import { quoteString } from './literal.js';
import type { Target, TargetSession } from './target.js';

const cancelled = () => new EngineError('cancelled', 'cancelled');

export async function withCancellableSession<T>(target: Target, signal: AbortSignal | undefined, work: (session: TargetSession) => Promise<T>, tag?: string): Promise<T> {
  if (signal?.aborted) throw cancelled();
  const session = await target.open();
  // A pooled session shared by many executions carries the tag only while it works for this one.
  if (tag !== undefined && target.type === 'postgres') await session.exec(`SET application_name = ${quoteString(tag)}`);
  // An abort that landed while connecting has already fired: the listener below would never run.
  if (signal?.aborted) {
    await session.close().catch(() => {});
    throw cancelled();
  }
  const onAbort = () => void target.cancel(session.cancelKey).catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(session);
  } catch (err) {
    if (signal?.aborted) throw new EngineError('cancelled', 'cancelled', err);
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (tag !== undefined && target.type === 'postgres') await session.exec('RESET application_name').catch(() => {});
    await session.close().catch(() => {});
  }
}
