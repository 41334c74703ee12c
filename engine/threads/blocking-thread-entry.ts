/**
 * The first module of every BlockingThread (blocking-thread.ts): marks the
 * thread ended when it exits, then loads the module it was started for and
 * hands its default export the thread's side. A module that fails to load
 * ends the thread, so the waiting caller learns it at once.
 */
import { workerData } from 'node:worker_threads';
import { importNear } from '../lazy-import.js';
import type { BlockingThreadData, ThreadSide } from './blocking-thread.js';

const { base, specifier, port, wake, ended, data } = workerData as BlockingThreadData;

function bump(): void {
  Atomics.add(wake, 0, 1);
  Atomics.notify(wake, 0);
}

process.on('exit', () => {
  Atomics.store(ended, 0, 1);
  bump();
});

const side: ThreadSide<unknown> = {
  data,
  onRequest: (handler) => port.on('message', handler),
  answer(message, transfer) {
    port.postMessage(message, transfer);
    bump();
  },
};

// No top-level await: under tsx this module is loaded by `require` (lazy-import.ts).
void importNear<{ default: (side: ThreadSide<unknown>) => void }>(base, specifier).then(
  (mod) => mod.default(side),
  (err: unknown) => {
    port.close();
    throw err; // an unhandled rejection ends the thread ('error' on the caller's side)
  },
);
