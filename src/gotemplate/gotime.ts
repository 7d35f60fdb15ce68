/**
 * Go's time.Time as templates see it (in UTC, which is where Alertmanager's times are): printed
 * as `2006-01-02 15:04:05.999999999 +0000 UTC`, with nanoseconds, its methods (Year, Month, Day,
 * Weekday, YearDay, Hour, Minute, Second, Nanosecond, Unix, UnixMilli, UnixMicro, UnixNano,
 * Format with every layout element, String, IsZero, UTC, Local, Before, After, Equal) and its JSON
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
}

function partsOf(ms: number, subMsNs: number): Parts {
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
  };
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
        if (at('January')) [emit, len] = [MONTHS[p.month - 1]!, 7];
        else if (at('Jan')) [emit, len] = [MONTHS[p.month - 1]!.slice(0, 3), 3];
        break;
      case 'M':
        if (at('Monday')) [emit, len] = [DAYS[p.weekday]!, 6];
        else if (at('Mon')) [emit, len] = [DAYS[p.weekday]!.slice(0, 3), 3];
        else if (at('MST')) [emit, len] = ['UTC', 3];
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
        // The zone is UTC: "Z" for the ISO 8601 forms, +00... for the numeric ones.
        const forms: [string, string][] = [['070000', '+000000'], ['07:00:00', '+00:00:00'], ['0700', '+0000'], ['07:00', '+00:00'], ['07', '+00']];
        for (const [f, v] of forms) {
          if (layout.startsWith(f, i + 1)) {
            [emit, len] = [c === 'Z' ? 'Z' : v, f.length + 1];
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

/** The exact instant, as Unix nanoseconds (for Before, After, Equal). */
const NANOS = Symbol('unixNanos');

const STRING_LAYOUT = '2006-01-02 15:04:05.999999999 -0700 MST';
/** Go's zero time, 0001-01-01T00:00:00Z, in epoch ms. */
const ZERO_MS = -62135596800000;

/** A time.Time at `ms` (epoch milliseconds) plus `subMsNs` nanoseconds (0-999999). */
export function goTime(ms: number, subMsNs = 0): object {
  const p = partsOf(ms, subMsNs);
  const total = BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + BigInt(p.ns);
  const t: Record<string | symbol, unknown> = {
    [GO_TYPE]: 'time.Time',
    [GO_FORMAT]: () => formatLayout(p, STRING_LAYOUT),
    [GO_JSON]: () => JSON.stringify(formatLayout(p, '2006-01-02T15:04:05.999999999Z07:00')),
    [GO_SYNTAX]: () => `time.Date(${p.year}, time.${MONTHS[p.month - 1]}, ${p.day}, ${p.hour}, ${p.minute}, ${p.second}, ${p.ns}, time.UTC)`,
  };
  const ns = (o: unknown) => (o && typeof o === 'object' && NANOS in o ? (o as Record<symbol, bigint>)[NANOS]! : undefined);
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
    UnixNano: () => total,
    Format: (layout: string) => formatLayout(p, String(layout)),
    String: () => formatLayout(p, STRING_LAYOUT),
    IsZero: () => ms === ZERO_MS && subMsNs === 0,
    UTC: () => t,
    Local: () => t,
    Location: () => ({ [GO_TYPE]: '*time.Location', [GO_FORMAT]: () => 'UTC' }),
    Before: (o: unknown) => total < (ns(o) ?? total),
    After: (o: unknown) => total > (ns(o) ?? total),
    Equal: (o: unknown) => total === ns(o),
  };
  Object.defineProperty(t, NANOS, { value: total, enumerable: false });
  for (const [k, fn] of Object.entries(methods)) Object.defineProperty(t, k, { value: fn, enumerable: false });
  return t;
}

