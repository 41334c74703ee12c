/**
 * Bounded waits for tests of things that must happen promptly (a cancel, an
 * exit after a signal): the promise's value, or a failure naming what did not
 * happen in time. A bound, not a measurement: it only catches work that is
 * not stopped at all (a query left to run to its end).
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` every 50 ms until it returns true, for at most `ms`. */
export async function waitFor(probe: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
