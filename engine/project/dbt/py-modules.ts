/**
 * `modules.*` in dbt templates: the parts of Python's `datetime`, `re` and
 * `pytz` that models use (`modules.datetime.datetime.now()`,
 * `.strftime('%Y-%m-%d')`, `timedelta(days=1)`, `date.today()`,
 * `datetime(1997, 9, 29, tzinfo=pytz.timezone('America/Los_Angeles'))`).
 */
import { callArgs } from '../../template/call-args.js';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

class PyDateTime {
  constructor(
    readonly d: Date,
    readonly dateOnly = false,
    /** `-07:00` for an aware datetime (tzinfo=…), '' for a naive one. */
    readonly offset = '',
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
    if (this.dateOnly) return this.strftime('%Y-%m-%d');
    // Python prints microseconds only when there are some.
    return this.strftime(this.d.getUTCMilliseconds() === 0 ? '%Y-%m-%d %H:%M:%S' : '%Y-%m-%d %H:%M:%S.%f') + this.offset;
  }
}

/** `pytz.timezone('America/Los_Angeles')`: a zone name the datetime constructor turns into an offset. */
class PyTimezone {
  constructor(readonly zone: string) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
    } catch {
      throw new Error(`UnknownTimeZoneError: '${zone}'`);
    }
  }
  /** The zone's UTC offset at wall-clock time `wall` (a UTC-based Date holding local fields), as `-07:00`. */
  offsetAt(wall: Date): string {
    const part = new Intl.DateTimeFormat('en-US', { timeZone: this.zone, timeZoneName: 'longOffset' }).formatToParts(wall).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const m = /GMT([+-]\d\d):?(\d\d)?/.exec(part);
    return m ? `${m[1]}:${m[2] ?? '00'}` : '+00:00';
  }
  toString(): string {
    return this.zone;
  }
}

/** `datetime(year, month, day, hour=0, …, tzinfo=None)`, positional or keyword. */
function makeDateTime(...args: unknown[]): PyDateTime {
  const { positional, kwargs } = callArgs(args);
  const names = ['year', 'month', 'day', 'hour', 'minute', 'second', 'microsecond', 'tzinfo'];
  const v = Object.fromEntries(names.map((n, i) => [n, kwargs[n] ?? positional[i]]));
  const num = (k: string, d = 0) => (v[k] === undefined || v[k] === null ? d : Number(v[k]));
  const d = new Date(Date.UTC(num('year'), num('month', 1) - 1, num('day', 1), num('hour'), num('minute'), num('second'), Math.floor(num('microsecond') / 1000)));
  return new PyDateTime(d, false, v.tzinfo instanceof PyTimezone ? v.tzinfo.offsetAt(d) : '');
}

function makeDate(...args: unknown[]): PyDateTime {
  const { positional, kwargs } = callArgs(args);
  const [y, m, d] = ['year', 'month', 'day'].map((n, i) => Number(kwargs[n] ?? positional[i]));
  return new PyDateTime(new Date(Date.UTC(y!, m! - 1, d!)), true);
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

let utc: PyTimezone | undefined;

/** The `modules` object of a render; `now` is the run's start, so every model sees one clock. */
export function pyModules(now: Date): Record<string, unknown> {
  const datetime = {
    datetime: Object.assign((...a: unknown[]) => makeDateTime(...a), {
      now: () => new PyDateTime(now),
      utcnow: () => new PyDateTime(now),
      fromisoformat: (s: string) => new PyDateTime(new Date(/Z|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`)),
      strptime: (s: string) => new PyDateTime(new Date(`${s.replace(' ', 'T')}Z`)),
    }),
    date: Object.assign((...a: unknown[]) => makeDate(...a), {
      today: () => new PyDateTime(now).date(),
      fromisoformat: (s: string) => new PyDateTime(new Date(`${s}T00:00:00Z`), true),
    }),
    timedelta,
  };
  const re = {
    match: (p: string, s: string) => new RegExp(`^(?:${p})`).exec(s),
    search: (p: string, s: string) => new RegExp(p).exec(s),
    sub: (p: string, r: string, s: string) => s.replace(new RegExp(p, 'g'), r.replace(/\\(\d)/g, '$$$1')),
    findall: (p: string, s: string) => [...s.matchAll(new RegExp(p, 'g'))].map((m) => m[1] ?? m[0]),
    escape: (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  };
  const pytz = {
    timezone: (zone: unknown) => new PyTimezone(String(zone)),
    // Made on first use: a time zone costs an Intl formatter, and this object is made per render.
    get utc() {
      return (utc ??= new PyTimezone('UTC'));
    },
  };
  return { datetime, re, pytz, itertools: { chain: (...xs: unknown[][]) => xs.flat() } };
}

export const runStartedAt = (now: Date) => new PyDateTime(now);
