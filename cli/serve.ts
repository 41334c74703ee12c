/**
 * `service serve`: reads the flags, starts the daemon (daemon/start-daemon.ts)
 * and turns signals into its shutdown: SIGTERM or SIGINT stops it gracefully
 * and exits 0; a second signal cancels running executions at once.
 */
import { startDaemon, type RunningDaemon } from '../daemon/start-daemon.js';
import { errorChain } from '../engine/errors.js';
import { batchedWriter, streamLogger } from '../engine/log.js';
import { serveFlags } from './daemon-flags.js';
import type { Io } from './io.js';
import type { ParsedArgs } from './parse-command-line.js';

export async function serveCommand(args: ParsedArgs, io: Io): Promise<number> {
  const flags = serveFlags(args);
  // One write per event-loop turn for the request log, not one per line.
  const stderr = batchedWriter(io.err);
  const logger = streamLogger({ level: 'info', json: (process.env.SERVICE_LOGGING ?? '').toUpperCase() === 'JSON', write: stderr.write, isoTime: true });
  let daemon: RunningDaemon;
  let fenced: (() => void) | undefined;
  try {
    daemon = await startDaemon(flags, logger, { onFenced: () => fenced?.() });
  } catch (err) {
    stderr.flush();
    io.err(`fatal: ${errorChain(err)}\n`);
    return 1;
  }
  // A promise some code path forgot to handle must not end a daemon that serves others' work:
  // one error line (the cause chain, no stack) and the daemon goes on.
  const onUnhandled = (err: unknown) => logger.log('error', `unhandled failure: ${errorChain(err)}`);
  process.on('unhandledRejection', onUnhandled);
  return new Promise<number>((resolve) => {
    // Taken over by another daemon: its executions are no longer ours; stop at once and exit 1.
    fenced = () =>
      void daemon.stop(true).then(() => {
        stderr.flush();
        process.off('unhandledRejection', onUnhandled);
        resolve(1);
      });
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      signals++;
      logger.log('info', signals === 1 ? `${sig}: shutting down (waiting up to ${flags.gracePeriodMs / 1000}s for running executions)` : `${sig}: cancelling running executions now`);
      void daemon.stop(signals > 1).then(() => {
        stderr.flush();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        process.off('unhandledRejection', onUnhandled);
        resolve(0);
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
