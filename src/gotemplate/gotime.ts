/**
 * Go's time.Time as templates see it: in UTC, or in the zone offset an alert's time was posted
 * with (Go keeps it: a fixed zone without a name, printed `+0200 +0200`; `+00:00` is Go's Local
 * zone, which on a UTC host prints as UTC). Printed as `2006-01-02 15:04:05.999999999 -0700 MST`,
 * with nanoseconds, its methods (Year, Month, Day, Weekday, YearDay, Hour, Minute, Second,
 * Nanosecond, Unix, UnixMilli, UnixMicro, UnixNano, Format with every layout element, String,
 * GoString, IsZero, UTC, Local, Location, Add, Sub, AddDate, Before, After, Equal) and its JSON
 * (RFC 3339 with nanoseconds) and Go syntax forms.
 */
import { GO_FORMAT, GO_INT, GO_JSON, GO_SYNTAX, GO_TYPE } from './values.js';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A Go named int printing as its name (time.Month, time.Weekday). */
function namedInt(type: string, n: number, name: string): object {
  return { [GO_INT]: n, [GO_TYPE]: type, [GO_FORMAT]: () => name, [GO_SYNTAX]: () => String(n) };
}

/** The fields of a time, computed once. */
interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ns: number;
  weekday: number;
  yearDay: number;
  /** Seconds east of UTC, and the zone's name ('' for a fixed zone from a posted offset). */
  offset: number;
  zone: string;
}

function partsOf(utcMs: number, subMsNs: number, off: number | undefined): Parts {
  const ms = off ? utcMs + off * 60_000 : utcMs;
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  // Midnight UTC of January 1st and of this day (setUTCFullYear: years 0-99 stay as they are).
  const jan1 = new Date(0);
  jan1.setUTCFullYear(year, 0, 1);
  const today = new Date(0);
  today.setUTCFullYear(year, d.getUTCMonth(), d.getUTCDate());
  return {
    year,
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ns: (((ms % 1000) + 1000) % 1000) * 1e6 + subMsNs,
    weekday: d.getUTCDay(),
    yearDay: Math.round((today.getTime() - jan1.getTime()) / 86_400_000) + 1,
    offset: (off ?? 0) * 60,
    zone: off ? '' : 'UTC',
  };
}

type Zone = 'hhmmss' | 'hh:mm:ss' | 'hhmm' | 'hh:mm' | 'hh';

/** A zone offset (seconds east) as a numeric layout element writes it. */
function zoneNumber(offset: number, form: Zone): string {
  const a = Math.abs(offset);
  const [h, m, s] = [Math.floor(a / 3600), Math.floor(a / 60) % 60, a % 60];
  let out = (offset < 0 ? '-' : '+') + int(h, 2);
  if (form === 'hh:mm' || form === 'hh:mm:ss') out += ':' + int(m, 2);
  else if (form === 'hhmm' || form === 'hhmmss') out += int(m, 2);
  if (form === 'hh:mm:ss' || form === 'hhmmss') out += (form === 'hh:mm:ss' ? ':' : '') + int(s, 2);
  return out;
}

/** Go's appendInt(b, x, width): zero-padded to width, '-' before the padding. */
function int(x: number, width: number): string {
  const s = String(Math.abs(x)).padStart(width, '0');
  return x < 0 ? '-' + s : s;
}

/** time.Time.Format: the layout read as Go reads it (reference time Mon Jan 2 15:04:05 MST 2006). */
export function formatLayout(p: Parts, layout: string): string {
  let out = '';
  let i = 0;
  const at = (s: string) => layout.startsWith(s, i);
  while (i < layout.length) {
    const c = layout[i]!;
    let emit: string | undefined;
    let len = 0;
    switch (c) {
      case 'J':
        // "Jan" and "Mon" only when no lower-case letter follows ("Janu" is text).
        if (at('January')) [emit, len] = [MONTHS[p.month - 1]!, 7];
        else if (at('Jan') && !/[a-z]/.test(layout[i + 3] ?? '')) [emit, len] = [MONTHS[p.month - 1]!.slice(0, 3), 3];
        break;
      case 'M':
        if (at('Monday')) [emit, len] = [DAYS[p.weekday]!, 6];
        else if (at('Mon') && !/[a-z]/.test(layout[i + 3] ?? '')) [emit, len] = [DAYS[p.weekday]!.slice(0, 3), 3];
        else if (at('MST')) [emit, len] = [p.zone || zoneNumber(p.offset, 'hhmm'), 3];
        break;
      case '0':
        if (/[1-6]/.test(layout[i + 1] ?? '')) {
          const v = [int(p.month, 2), int(p.day, 2), int(p.hour % 12 || 12, 2), int(p.minute, 2), int(p.second, 2), int(p.year % 100, 2)][Number(layout[i + 1]) - 1]!;
          [emit, len] = [v, 2];
        } else if (at('002')) [emit, len] = [int(p.yearDay, 3), 3];
        break;
      case '1':
        if (at('15')) [emit, len] = [int(p.hour, 2), 2];
        else [emit, len] = [String(p.month), 1];
        break;
      case '2':
        if (at('2006')) [emit, len] = [int(p.year, 4), 4];
        else [emit, len] = [String(p.day), 1];
        break;
      case '_':
        if (at('_2006')) [emit, len] = ['_' + int(p.year, 4), 5];
        else if (at('_2')) [emit, len] = [String(p.day).padStart(2, ' '), 2];
        else if (at('__2')) [emit, len] = [String(p.yearDay).padStart(3, ' '), 3];
        break;
      case '3':
        [emit, len] = [String(p.hour % 12 || 12), 1];
        break;
      case '4':
        [emit, len] = [String(p.minute), 1];
        break;
      case '5':
        [emit, len] = [String(p.second), 1];
        break;
      case 'P':
        if (at('PM')) [emit, len] = [p.hour >= 12 ? 'PM' : 'AM', 2];
        break;
      case 'p':
        if (at('pm')) [emit, len] = [p.hour >= 12 ? 'pm' : 'am', 2];
        break;
      case '-':
      case 'Z': {
        // "Z" for the ISO 8601 forms at offset 0, ±hh[mm[ss]] otherwise.
        const forms: [string, Zone][] = [['070000', 'hhmmss'], ['07:00:00', 'hh:mm:ss'], ['0700', 'hhmm'], ['07:00', 'hh:mm'], ['07', 'hh']];
        for (const [f, form] of forms) {
          if (layout.startsWith(f, i + 1)) {
            [emit, len] = [c === 'Z' && p.offset === 0 ? 'Z' : zoneNumber(p.offset, form), f.length + 1];
            break;
          }
        }
        break;
      }
      case '.':
      case ',': {
        const d = layout[i + 1];
        if (d === '0' || d === '9') {
          let j = i + 1;
          while (layout[j] === d) j++;
          if (!/[0-9]/.test(layout[j] ?? '')) {
            const digits = String(p.ns).padStart(9, '0').slice(0, j - i - 1);
            if (d === '0') emit = c + digits;
            else {
              const trimmed = digits.replace(/0+$/, '');
              emit = trimmed ? c + trimmed : '';
            }
            len = j - i;
          }
        }
        break;
      }
    }
    if (emit !== undefined) {
      out += emit;
      i += len;
    } else out += layout[i++];
  }
  return out;
}

/** The exact instant, as Unix nanoseconds (for Before, After, Equal, Sub). */
const NANOS = Symbol('unixNanos');

const STRING_LAYOUT = '2006-01-02 15:04:05.999999999 -0700 MST';
/** Go's zero time, 0001-01-01T00:00:00Z, in epoch ms. */
const ZERO_MS = -62135596800000;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** time.Duration: an int64 of nanoseconds printing as `1h2m3.5s`. */
export function goDuration(ns: bigint): object {
  return { [GO_INT]: ns, [GO_TYPE]: 'time.Duration', [GO_FORMAT]: () => durationString(ns), [GO_SYNTAX]: () => String(ns) };
}

/** time.Duration.String. */
export function durationString(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    // Below a second: ns, µs or ms with a fraction.
    const [unit, scale] = u < 1000n ? ['ns', 1n] : u < 1_000_000n ? ['µs', 1000n] : ['ms', 1_000_000n];
    out = fraction(u, scale) + unit;
  } else {
    const s = fraction(u % 60_000_000_000n, 1_000_000_000n) + 's';
    u /= 60_000_000_000n;
    if (u === 0n) out = s;
    else {
      const m = `${u % 60n}m`;
      u /= 60n;
      out = (u > 0n ? `${u}h` : '') + m + s;
    }
  }
  return (neg ? '-' : '') + out;
}

/** v / scale with the remainder as a decimal fraction, trailing zeros dropped. */
function fraction(v: bigint, scale: bigint): string {
  const whole = v / scale;
  const rest = v % scale;
  if (rest === 0n) return String(whole);
  const digits = String(scale).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

function nanosOf(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (v && typeof v === 'object' && GO_INT in v) return BigInt((v as Record<symbol, number | bigint>)[GO_INT]);
  throw new TypeError(`wrong type for value; expected time.Duration; got ${typeof v === 'string' ? 'string' : typeof v}`);
}

/** Where Go's Location prints for a time: UTC, Local (posted +00:00) or a fixed zone's empty name. */
function locationName(off: number | undefined): string {
  return off === undefined ? 'UTC' : off === 0 ? 'Local' : '';
}

/**
 * A time.Time at `ms` (epoch milliseconds) plus `subMsNs` nanoseconds (0-999999), in the zone
 * `off` minutes east of UTC it was posted with (undefined: UTC; 0: Go's Local on a UTC host).
 */
export function goTime(ms: number, subMsNs = 0, off?: number): object {
  const p = partsOf(ms, subMsNs, off);
  const total = BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + BigInt((((ms % 1000) + 1000) % 1000) * 1e6 + subMsNs);
  const loc = locationName(off);
  const t: Record<string | symbol, unknown> = {
    [GO_TYPE]: 'time.Time',
    [GO_FORMAT]: () => formatLayout(p, STRING_LAYOUT),
    [GO_JSON]: () => JSON.stringify(formatLayout(p, '2006-01-02T15:04:05.999999999Z07:00')),
    [GO_SYNTAX]: () => goString(),
  };
  const goString = () =>
    `time.Date(${p.year}, time.${MONTHS[p.month - 1]}, ${p.day}, ${p.hour}, ${p.minute}, ${p.second}, ${p.ns}, ${loc === 'UTC' ? 'time.UTC' : loc === 'Local' ? 'time.Local' : `time.Location(${JSON.stringify(loc)})`})`;
  const ns = (o: unknown) => (o && typeof o === 'object' && NANOS in o ? (o as Record<symbol, bigint>)[NANOS]! : undefined);
  /** The time at Unix nanoseconds `n`, in this time's zone. */
  const at = (n: bigint) => {
    const msPart = n / 1_000_000n - (n % 1_000_000n < 0n ? 1n : 0n);
    return goTime(Number(msPart), Number(n - msPart * 1_000_000n), off);
  };
  const methods: Record<string, (...a: never[]) => unknown> = {
    Year: () => p.year,
    Month: () => namedInt('time.Month', p.month, MONTHS[p.month - 1]!),
    Day: () => p.day,
    Weekday: () => namedInt('time.Weekday', p.weekday, DAYS[p.weekday]!),
    YearDay: () => p.yearDay,
    Hour: () => p.hour,
    Minute: () => p.minute,
    Second: () => p.second,
    Nanosecond: () => p.ns,
    Unix: () => Math.floor(ms / 1000),
    UnixMilli: () => Math.floor(ms),
    UnixMicro: () => Number(total / 1000n),
    // int64 arithmetic: wraps around for times far from 1970 (Go's zero time), as Go's does.
    UnixNano: () => BigInt.asIntN(64, total),
    Format: (layout: string) => formatLayout(p, String(layout)),
    String: () => formatLayout(p, STRING_LAYOUT),
    GoString: () => goString(),
    IsZero: () => ms === ZERO_MS && subMsNs === 0,
    UTC: () => (off === undefined ? t : goTime(ms, subMsNs)),
    Local: () => (off === 0 ? t : goTime(ms, subMsNs, 0)),
    Location: () => ({ [GO_TYPE]: '*time.Location', [GO_FORMAT]: () => loc }),
    Add: (d: unknown) => at(total + nanosOf(d)),
    Sub: (o: unknown) => {
      const d = total - (ns(o) ?? total);
      return goDuration(d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : d);
    },
    AddDate: (y: unknown, m: unknown, d: unknown) => {
      // Date(year+y, month+m, day+d, ...) in this zone, normalised as Go normalises.
      const local = new Date(0);
      local.setUTCFullYear(p.year + Number(y), p.month - 1 + Number(m), p.day + Number(d));
      local.setUTCHours(p.hour, p.minute, p.second, 0);
      const utc = local.getTime() - p.offset * 1000;
      return goTime(utc + Math.floor(p.ns / 1e6), p.ns % 1e6, off);
    },
    Before: (o: unknown) => total < (ns(o) ?? total),
    After: (o: unknown) => total > (ns(o) ?? total),
    Equal: (o: unknown) => total === ns(o),
  };
  Object.defineProperty(t, NANOS, { value: total, enumerable: false });
  for (const [k, fn] of Object.entries(methods)) Object.defineProperty(t, k, { value: fn, enumerable: false });
  return t;
}
