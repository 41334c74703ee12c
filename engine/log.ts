/**
 * Logging to stderr in the documented line format:
 * `<time> <LVL> <message>`; time `3:04PM`, or `YYYY-MM-DD HH:mm:ss.SSS` with
 * --debug/--trace. SERVICE_LOGGING=JSON writes `{"level","msg","time"}`.
 * The engine only sees the `Logger` interface, so a pipeline step or the
 * daemon can capture lines into a task log instead.
 */

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<Level, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
const LABEL: Record<Level, string> = { trace: 'TRC', debug: 'DBG', info: 'INF', warn: 'WRN', error: 'ERR' };

export interface Logger {
  log(level: Level, message: string): void;
  enabled(level: Level): boolean;
}

export const log = {
  trace: (l: Logger, m: string) => l.log('trace', m),
  debug: (l: Logger, m: string) => l.log('debug', m),
  info: (l: Logger, m: string) => l.log('info', m),
  warn: (l: Logger, m: string) => l.log('warn', m),
  error: (l: Logger, m: string) => l.log('error', m),
};

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function clock(d: Date, precise: boolean): string {
  if (precise) {
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }
  const h = d.getHours() % 12 === 0 ? 12 : d.getHours() % 12;
  return `${h}:${pad(d.getMinutes())}${d.getHours() < 12 ? 'AM' : 'PM'}`;
}

export interface StreamLoggerOptions {
  readonly level: Level;
  readonly write?: (line: string) => void;
  readonly json?: boolean;
  readonly now?: () => Date;
  /**
   * Full ISO-8601 times (`2026-11-24T20:19:04.123Z`): a daemon's log spans days and is
   * read next to other systems' logs, where `3:04PM` says too little.
   */
  readonly isoTime?: boolean;
  /** ANSI colours on the level label (a terminal that wants them: see cli/cli-logger.ts). */
  readonly color?: boolean;
}

const COLOR: Record<Level, string> = { trace: '\x1b[2m', debug: '\x1b[2m', info: '\x1b[32m', warn: '\x1b[33m', error: '\x1b[31m' };

export function streamLogger(opts: StreamLoggerOptions): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const now = opts.now ?? (() => new Date());
  const min = ORDER[opts.level];
  const precise = min <= ORDER.debug;
  return {
    enabled: (level) => ORDER[level] >= min,
    log(level, message) {
      if (ORDER[level] < min) return;
      const t = now();
      if (opts.json) write(JSON.stringify({ level, msg: message, time: t.toISOString() }) + '\n');
      else {
        const label = opts.color ? `${COLOR[level]}${LABEL[level]}\x1b[0m` : LABEL[level];
        write(`${opts.isoTime ? t.toISOString() : clock(t, precise)} ${label} ${message}\n`);
      }
    },
  };
}

export interface BatchedWriter {
  /** Queues `text`; it is written, after everything queued before it, at the end of this event-loop turn. */
  write(text: string): void;
  /** Writes what is queued now (also done on process exit). */
  flush(): void;
}

/**
 * Joins the texts written during one turn of the event loop into one write
 * to `write`, in order, none dropped. A daemon under load logs one line per
 * request; process.stderr writes are synchronous for files and
 * pipes, so a write per line costs a system call per request, where a batch
 * costs one per turn. Queued text is flushed at `setImmediate` and, through
 * a process 'exit' listener, when the process ends (an uncaught exception
 * included); only a kill -9 could lose the last turn's lines.
 */
export function batchedWriter(write: (text: string) => void): BatchedWriter {
  let queued: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queued.length === 0) return;
    const text = queued.length === 1 ? queued[0]! : queued.join('');
    queued = [];
    write(text);
  };
  process.on('exit', flush);
  return {
    write(text) {
      queued.push(text);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/**
 * A logger that passes every line on to `logger` and also keeps it in
 * `lines`, so a cached result can log the same warnings again when reused.
 */
export function recordingLogger(logger: Logger, lines: (readonly [Level, string])[]): Logger {
  return {
    log(level, message) {
      lines.push([level, message]);
      logger.log(level, message);
    },
    enabled: (level) => logger.enabled(level),
  };
}

/** A logger that keeps lines in memory: for tests and for task logs. */
export function memoryLogger(level: Level = 'debug'): Logger & { readonly lines: { level: Level; message: string }[] } {
  const lines: { level: Level; message: string }[] = [];
  return {
    lines,
    enabled: (l) => ORDER[l] >= ORDER[level],
    log(l, message) {
      if (ORDER[l] >= ORDER[level]) lines.push({ level: l, message });
    },
  };
}
