/**
 * Time values as Alertmanager's API reads and writes them: strfmt.DateTime parsing (the layouts
 * of go-openapi/strfmt 0.21, with Go's time.Parse error text) and RFC3339 output with exactly
 * three fractional digits in UTC.
 */
import { goQuote } from '../gotemplate/funcs.js';

/** Go's zero time (0001-01-01T00:00:00Z) in epoch ms: amtool sends it to mean "unset". */
export const GO_ZERO_MS = -62135596800000;

export class TimeParseError extends Error {}

/** Epoch ms → `2006-01-02T15:04:05.000Z`. */
export function formatTime(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    if (formatted.size >= FORMATTED_MAX) formatted.clear();
    text = formatTimeUncached(ms);
    formatted.set(ms, text);
  }
  return text;
}

/**
 * Times already formatted. Alerts posted in one batch share their times, so a render of 10,000
 * alerts formats 30,000 times of a few hundred distinct values (a batch's start and update time
 * each, interleaved once sorted by fingerprint): one `toISOString` and one string each instead of
 * 30,000. Emptied when full, so it never holds more than FORMATTED_MAX strings (~60 KB).
 */
const FORMATTED_MAX = 1024;
const formatted = new Map<number, string>();

function formatTimeUncached(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  if (y >= 0 && y <= 9999) return d.toISOString();
  // toISOString writes +010000 / -000001; Go writes the plain year.
  return `${y}` + d.toISOString().replace(/^[+-]\d{6}/, '');
}

type Elem =
  | { kind: 'lit'; text: string }
  | { kind: 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' }
  | { kind: 'frac'; digits: number }
  | { kind: 'zone'; colon: boolean };

interface Layout {
  text: string;
  elems: Elem[];
}

function layout(text: string): Layout {
  const elems: Elem[] = [];
  let i = 0;
  const std: [string, Elem][] = [
    ['2006', { kind: 'year' }],
    ['01', { kind: 'month' }],
    ['02', { kind: 'day' }],
    ['15', { kind: 'hour' }],
    ['04', { kind: 'minute' }],
    ['05', { kind: 'second' }],
    ['.000000', { kind: 'frac', digits: 6 }],
    ['.000', { kind: 'frac', digits: 3 }],
    ['Z07:00', { kind: 'zone', colon: true }],
    ['Z0700', { kind: 'zone', colon: false }],
  ];
  outer: while (i < text.length) {
    for (const [s, e] of std) {
      if (text.startsWith(s, i)) {
        elems.push(e);
        i += s.length;
        continue outer;
      }
    }
    const last = elems[elems.length - 1];
    if (last && last.kind === 'lit') last.text += text[i];
    else elems.push({ kind: 'lit', text: text[i]! });
    i++;
  }
  return { text, elems };
}

const LAYOUTS = [
  '2006-01-02T15:04:05.000000Z07:00',
  '2006-01-02T15:04:05.000000Z0700',
  '2006-01-02T15:04:05.000Z07:00',
  '2006-01-02T15:04:05.000Z0700',
  '2006-01-02T15:04:05Z07:00', // time.RFC3339
  '2006-01-02T15:04:05.999999999Z07:00', // time.RFC3339Nano (fraction handled after seconds)
  '2006-01-02T15:04:05',
  '2006-01-02T15:04Z',
  '2006-01-02T15:04',
  '2006-01-02 15:04:05',
].map((t) => layout(t.replace('.999999999', '')));

/** Go's time.quote (1.19): double quotes; control and non-ASCII bytes as \xNN. */
export function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || c >= 0x80) {
      for (const b of Buffer.from(ch, 'utf8')) out += '\\x' + b.toString(16).padStart(2, '0');
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return out + '"';
}

/** Go's %q / strconv.Quote for the texts that show up in error messages. */
export { goQuote };

function isDigit(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** getnum: one or two digits (exactly two when fixed). */
function getnum(s: string, fixed: boolean): [number, string] | null {
  if (!isDigit(s, 0)) return null;
  if (!isDigit(s, 1)) {
    if (fixed) return null;
    return [s.charCodeAt(0) - 48, s.slice(1)];
  }
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2)];
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** Days since 1970-01-01 for a proleptic Gregorian date (no Date quirks for years < 100). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

type ParseResult = { ok: true; ms: number } | { ok: false; message: string };

function parseWith(l: Layout, value: string): ParseResult {
  const fail = (layoutElem: string, valueElem: string): ParseResult => ({
    ok: false,
    message: `parsing time ${timeQuote(value)} as ${timeQuote(l.text)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`,
  });
  const range = (what: string): ParseResult => ({ ok: false, message: `parsing time ${timeQuote(value)}: ${what} out of range` });
  let v = value;
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, fracMs = 0, offsetMin = 0;
  const stdText: Record<string, string> = { year: '2006', month: '01', day: '02', hour: '15', minute: '04', second: '05' };
  for (const e of l.elems) {
    if (e.kind === 'lit') {
      // Go's skip(): a space in the layout matches any run of spaces (or none at the end).
      let p = e.text;
      while (p.length > 0) {
        if (p[0] === ' ') {
          if (v.length > 0 && v[0] !== ' ') return fail(e.text, v);
          p = p.replace(/^ +/, '');
          v = v.replace(/^ +/, '');
          continue;
        }
        if (v.length === 0 || v[0] !== p[0]) return fail(e.text, v);
        p = p.slice(1);
        v = v.slice(1);
      }
      continue;
    }
    const before = v;
    switch (e.kind) {
      case 'year': {
        if (v.length < 4 || !/^\d{4}/.test(v)) return fail('2006', before);
        year = Number(v.slice(0, 4));
        v = v.slice(4);
        break;
      }
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second': {
        const r = getnum(v, e.kind !== 'hour');
        if (!r) return fail(stdText[e.kind]!, before);
        const [n, rest] = r;
        v = rest;
        if (e.kind === 'month') {
          if (n <= 0 || n > 12) return { ok: false, message: `parsing time ${timeQuote(value)}: month out of range` };
          month = n;
        } else if (e.kind === 'day') day = n;
        else if (e.kind === 'hour') {
          if (n >= 24) return range('hour');
          hour = n;
        } else if (e.kind === 'minute') {
          if (n >= 60) return range('minute');
          minute = n;
        } else {
          if (n >= 60) return range('second');
          second = n;
          // Go accepts a fraction after the seconds even when the layout has none.
          const next = l.elems[l.elems.indexOf(e) + 1];
          if (!(next && next.kind === 'frac') && v.length > 1 && (v[0] === '.' || v[0] === ',') && isDigit(v, 1)) {
            let n2 = 1;
            while (n2 < v.length && isDigit(v, n2)) n2++;
            fracMs = fracToMs(v.slice(1, n2));
            v = v.slice(n2);
          }
        }
        break;
      }
      case 'frac': {
        const want = e.digits + 1;
        if (v.length < want || (v[0] !== '.' && v[0] !== ',') || !/^\d+$/.test(v.slice(1, want))) {
          return fail('.' + '0'.repeat(e.digits), before);
        }
        fracMs = fracToMs(v.slice(1, want));
        v = v.slice(want);
        break;
      }
      case 'zone': {
        const layoutElem = e.colon ? 'Z07:00' : 'Z0700';
        if (v.length >= 1 && v[0] === 'Z') {
          v = v.slice(1);
          offsetMin = 0;
          break;
        }
        const re = e.colon ? /^([+-])(\d\d):(\d\d)/ : /^([+-])(\d\d)(\d\d)/;
        const m = re.exec(v);
        if (!m) return fail(layoutElem, before);
        const hh = Number(m[2]);
        const mm = Number(m[3]);
        offsetMin = (m[1] === '-' ? -1 : 1) * (hh * 60 + mm);
        v = v.slice(m[0].length);
        break;
      }
    }
  }
  if (v.length > 0) return { ok: false, message: `parsing time ${timeQuote(value)}: extra text: ${timeQuote(v)}` };
  if (day < 1 || day > daysIn(month, year)) return range('day');
  const ms = daysFromCivil(year, month, day) * 86400000 + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + fracMs;
  return { ok: true, ms };
}

function fracToMs(digits: string): number {
  return Number((digits + '000').slice(0, 3));
}

/** `n` ASCII digits at `at` as a number, or -1. */
function digitsAt(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 0x30;
    if (!(c >= 0 && c <= 9)) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * The common case, `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` with a valid date, read without a
 * regex and without trying every layout; undefined for anything else.
 */
export function parseRfc3339Fast(s: string): number | undefined {
  const n = s.length;
  if (n < 20) return undefined;
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d || s.charCodeAt(10) !== 0x54 || s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a) return undefined;
  const year = digitsAt(s, 0, 4), month = digitsAt(s, 5, 2), day = digitsAt(s, 8, 2);
  const hour = digitsAt(s, 11, 2), minute = digitsAt(s, 14, 2), second = digitsAt(s, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let i = 19;
  let frac = 0;
  if (s.charCodeAt(i) === 0x2e) {
    // Fraction: any number of digits, milliseconds from the first three.
    let j = i + 1;
    for (; j < n; j++) {
      const c = s.charCodeAt(j) - 0x30;
      if (!(c >= 0 && c <= 9)) break;
      if (j - i <= 3) frac += c * (j - i === 1 ? 100 : j - i === 2 ? 10 : 1);
    }
    if (j === i + 1) return undefined;
    i = j;
  }
  let offset = 0;
  const z = s.charCodeAt(i);
  if (z === 0x5a) {
    if (i + 1 !== n) return undefined;
  } else if (z === 0x2b || z === 0x2d) {
    if (i + 6 !== n || s.charCodeAt(i + 3) !== 0x3a) return undefined;
    const hh = digitsAt(s, i + 1, 2);
    const mm = digitsAt(s, i + 4, 2);
    if (hh < 0 || mm < 0) return undefined;
    offset = (z === 0x2d ? -1 : 1) * (hh * 60 + mm);
  } else return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || second > 59) return undefined;
  return daysFromCivil(year, month, day) * 86400000 + ((hour * 60 + minute - offset) * 60 + second) * 1000 + frac;
}

/**
 * The nanoseconds past the millisecond that an RFC 3339 time's fraction holds (its 4th to 9th
 * digits; 0 with three or fewer): Go keeps them in the time.Time an alert is stored with, and
 * templates and webhook payloads print them. Cheap: two character reads for a millisecond time.
 */
export function subMilliNanos(s: string): number {
  if (s.charCodeAt(19) !== 0x2e) return 0;
  for (let j = 20; j < 24; j++) {
    const c = s.charCodeAt(j) - 0x30;
    if (!(c >= 0 && c <= 9)) return 0;
  }
  let ns = 0;
  for (let j = 23, scale = 100_000; j < 29; j++, scale /= 10) {
    const c = s.charCodeAt(j) - 0x30;
    if (!(c >= 0 && c <= 9)) break;
    ns += c * scale;
  }
  return ns;
}

/**
 * strfmt.ParseDateTime: "" is the Unix epoch (a 0.25 quirk); otherwise the first layout that
 * parses wins; the error is the last layout's. Returns epoch ms.
 */
export function parseDateTime(s: string): number {
  if (s === '') return 0;
  const fast = parseRfc3339Fast(s);
  if (fast !== undefined) return fast;
  let last = '';
  for (const l of LAYOUTS) {
    const r = parseWith(l, s);
    if (r.ok) return r.ms;
    last = r.message;
  }
  throw new TimeParseError(last);
}

// ---- durations -------------------------------------------------------------------------------

const MODEL_DURATION_RE = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_MS = [365 * 86400000, 7 * 86400000, 86400000, 3600000, 60000, 1000, 1];
const MAX_NS = 2n ** 63n - 1n;

/** prometheus/common model.ParseDuration (`5m`, `1h30m`, `1d`, `0`); returns ms. */
export function parseModelDuration(s: string): number {
  if (s === '0') return 0;
  if (s === '') throw new Error('empty duration string');
  const m = MODEL_DURATION_RE.exec(s);
  if (!m) throw new Error(`not a valid duration string: ${goQuote(s)}`);
  let total = 0n;
  for (let i = 0; i < 7; i++) {
    const g = m[i + 1];
    if (g === undefined) continue;
    total += BigInt(g) * BigInt(UNIT_MS[i]!);
    if (total * 1000000n > MAX_NS) throw new Error('duration out of range');
  }
  return Number(total);
}

/** model.Duration.String(): `5m`, `1h30m`, `90d`, `0s`. */
export function formatModelDuration(ms: number): string {
  if (ms === 0) return '0s';
  let r = '';
  let rest = ms;
  const units: [string, number, boolean][] = [
    ['y', UNIT_MS[0]!, true],
    ['w', UNIT_MS[1]!, true],
    ['d', UNIT_MS[2]!, false],
    ['h', UNIT_MS[3]!, false],
    ['m', UNIT_MS[4]!, false],
    ['s', UNIT_MS[5]!, false],
    ['ms', 1, false],
  ];
  for (const [unit, mult, exact] of units) {
    if (exact && rest % mult !== 0) continue;
    const v = Math.floor(rest / mult);
    if (v > 0) {
      r += `${v}${unit}`;
      rest -= v * mult;
    }
  }
  return r;
}

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };

/** Go time.ParseDuration (`1m30s`, `1.5h`, `-2h`); returns ms (fractions of ms kept). */
export function parseGoDuration(s: string): number {
  const orig = s;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new Error(`time: invalid duration ${goQuote(orig)}`);
  let total = 0;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)?/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m || (m[1] === '' && (m[2] === undefined || m[2] === '')) || m[0] === '') {
      throw new Error(`time: invalid duration ${goQuote(orig)}`);
    }
    if (!m[3]) throw new Error(`time: missing unit in duration ${goQuote(orig)}`);
    const n = Number(`${m[1] || '0'}.${m[2] || '0'}`);
    total += n * GO_UNITS[m[3]]!;
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

/** Go time.Duration.String() for whole-ms values: `1m0s`, `1h0m0s`, `500ms`, `0s`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let a = Math.abs(ms);
  let out: string;
  if (a < 1000) {
    out = `${trimFloat(a)}ms`;
  } else {
    const h = Math.floor(a / 3600000);
    a -= h * 3600000;
    const m = Math.floor(a / 60000);
    a -= m * 60000;
    const sec = trimFloat(a / 1000);
    out = h > 0 ? `${h}h${m}m${sec}s` : m > 0 ? `${m}m${sec}s` : `${sec}s`;
  }
  return (neg ? '-' : '') + out;
}

function trimFloat(n: number): string {
  return Number(n.toFixed(9)).toString();
}

/**
 * The zone offset an RFC 3339 time was written with, in minutes east of UTC, which Go keeps in
 * the time.Time (0.25 prints the alert's times with it in templates, webhooks and the API);
 * undefined for `Z` (UTC). `+00:00` gives 0: Go's Local zone when that is UTC (the host's zone),
 * printed as UTC but with Location "Local". Callers skip this for Z-terminated strings (the
 * common case): it reads the last six characters only.
 */
export function postedOffset(s: string): number | undefined {
  const n = s.length;
  const z = s.charCodeAt(n - 6);
  if (n < 6 || (z !== 0x2b && z !== 0x2d) || s.charCodeAt(n - 3) !== 0x3a) return undefined;
  const hh = (s.charCodeAt(n - 5) - 0x30) * 10 + (s.charCodeAt(n - 4) - 0x30);
  const mm = (s.charCodeAt(n - 2) - 0x30) * 10 + (s.charCodeAt(n - 1) - 0x30);
  if (!(hh >= 0 && hh <= 99 && mm >= 0 && mm <= 99)) return undefined;
  const off = hh * 60 + mm;
  return z === 0x2d ? (off === 0 ? 0 : -off) : off;
}

/** An offset (postedOffset) as RFC 3339 writes it: `Z` for UTC, else ±hh:mm. */
export function offsetText(off: number | undefined): string {
  if (!off) return 'Z';
  const a = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/**
 * strfmt.DateTime's JSON (the API's times): formatTime in the zone the time was posted with,
 * `2006-01-02T15:04:05.000+02:00`.
 */
export function formatTimeIn(ms: number, off: number | undefined): string {
  if (!off) return formatTime(ms);
  return formatTimeUncached(ms + off * 60_000).slice(0, -1) + offsetText(off);
}
