/**
 * `modules.*` in dbt templates: the parts of Python's `datetime`, `re` and
 * `pytz`-free time handling that models use (`modules.datetime.datetime.now()`,
 * `.strftime('%Y-%m-%d')`, `timedelta(days=1)`, `date.today()`).
 */
import { callArgs } from '../../template/call-args.js';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

class PyDateTime {
  constructor(
    readonly d: Date,
    readonly dateOnly = false,
  ) {}
  get year() {
    return this.d.getUTCFullYear();
  }
  get month() {
    return this.d.getUTCMonth() + 1;
  }
  get day() {
    return this.d.getUTCDate();
  }
  get hour() {
    return this.d.getUTCHours();
  }
  get minute() {
    return this.d.getUTCMinutes();
  }
  get second() {
    return this.d.getUTCSeconds();
  }
  strftime(fmt: string): string {
    const d = this.d;
    const map: Record<string, string> = {
      Y: String(d.getUTCFullYear()),
      m: pad(d.getUTCMonth() + 1),
      d: pad(d.getUTCDate()),
      H: pad(d.getUTCHours()),
      M: pad(d.getUTCMinutes()),
      S: pad(d.getUTCSeconds()),
      f: pad(d.getUTCMilliseconds() * 1000, 6),
      y: pad(d.getUTCFullYear() % 100),
      j: pad(Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000) + 1, 3),
      '%': '%',
    };
    return fmt.replace(/%(.)/g, (w, c: string) => map[c] ?? w);
  }
  isoformat(): string {
    return this.dateOnly ? this.strftime('%Y-%m-%d') : this.strftime('%Y-%m-%dT%H:%M:%S.%f');
  }
  date(): PyDateTime {
    return new PyDateTime(new Date(Date.UTC(this.year, this.month - 1, this.day)), true);
  }
  replace(...args: unknown[]): PyDateTime {
    const kw = callArgs(args).kwargs as Record<string, number>;
    return new PyDateTime(new Date(Date.UTC(kw.year ?? this.year, (kw.month ?? this.month) - 1, kw.day ?? this.day, kw.hour ?? this.hour, kw.minute ?? this.minute, kw.second ?? this.second)), this.dateOnly);
  }
  __add__(td: PyTimeDelta): PyDateTime {
    return new PyDateTime(new Date(this.d.getTime() + td.ms), this.dateOnly);
  }
  toString(): string {
    return this.dateOnly ? this.strftime('%Y-%m-%d') : this.strftime('%Y-%m-%d %H:%M:%S.%f');
  }
}

class PyTimeDelta {
  constructor(readonly ms: number) {}
  total_seconds(): number {
    return this.ms / 1000;
  }
  toString(): string {
    return `${this.ms / 1000}s`;
  }
}

function timedelta(...args: unknown[]): PyTimeDelta {
  const kw = callArgs(args).kwargs as Record<string, number>;
  const ms = (kw.weeks ?? 0) * 604800000 + (kw.days ?? 0) * 86400000 + (kw.hours ?? 0) * 3600000 + (kw.minutes ?? 0) * 60000 + (kw.seconds ?? 0) * 1000 + (kw.milliseconds ?? 0);
  return new PyTimeDelta(ms);
}

/** The `modules` object of a render; `now` is the run's start, so every model sees one clock. */
export function pyModules(now: Date): Record<string, unknown> {
  const datetime = {
    datetime: {
      now: () => new PyDateTime(now),
      utcnow: () => new PyDateTime(now),
      fromisoformat: (s: string) => new PyDateTime(new Date(/Z|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`)),
      strptime: (s: string) => new PyDateTime(new Date(`${s.replace(' ', 'T')}Z`)),
    },
    date: {
      today: () => new PyDateTime(now).date(),
      fromisoformat: (s: string) => new PyDateTime(new Date(`${s}T00:00:00Z`), true),
    },
    timedelta,
  };
  const re = {
    match: (p: string, s: string) => new RegExp(`^(?:${p})`).exec(s),
    search: (p: string, s: string) => new RegExp(p).exec(s),
    sub: (p: string, r: string, s: string) => s.replace(new RegExp(p, 'g'), r.replace(/\\(\d)/g, '$$$1')),
    findall: (p: string, s: string) => [...s.matchAll(new RegExp(p, 'g'))].map((m) => m[1] ?? m[0]),
    escape: (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  };
  return { datetime, re, itertools: { chain: (...xs: unknown[][]) => xs.flat() } };
}

export const runStartedAt = (now: Date) => new PyDateTime(now);
