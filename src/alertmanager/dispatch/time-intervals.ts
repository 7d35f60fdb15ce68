/**
 * timeinterval.ContainsTime of 0.25: is a moment inside a named time interval? An interval matches
 * when every field it sets matches (times as [start, end) minutes of the day, weekday, day of the
 * month counting negative days from its end, month, year), read on the wall clock of its
 * `location` (UTC by default); a name matches when any of its intervals does.
 */
import type { TimeIntervalRuntime } from '../config/runtime.js';

interface WallClock {
  year: number;
  month: number;
  day: number;
  weekday: number;
  minute: number;
  daysInMonth: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

function wallClock(ms: number, location: string | undefined): WallClock {
  const zone = !location || location === 'UTC' ? 'UTC' : location === 'Local' ? Intl.DateTimeFormat().resolvedOptions().timeZone : location;
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', weekday: 'short', hour: 'numeric', minute: 'numeric' });
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  const year = Number(p.year);
  const month = Number(p.month);
  return {
    year,
    month,
    day: Number(p.day),
    weekday: WEEKDAYS[p.weekday!]!,
    minute: Number(p.hour) * 60 + Number(p.minute),
    daysInMonth: new Date(Date.UTC(year, month, 0)).getUTCDate(),
  };
}

const inRanges = (v: number, ranges: { begin: number; end: number }[]) => ranges.some((r) => v >= r.begin && v <= r.end);

function dayMatches(w: WallClock, ranges: { begin: number; end: number }[]): boolean {
  const n = w.daysInMonth;
  for (const r of ranges) {
    let begin = r.begin < 0 ? n + r.begin + 1 : r.begin;
    let end = r.end < 0 ? n + r.end + 1 : r.end;
    if (begin > n) continue; // a day this month does not have
    begin = Math.max(-n, Math.min(n, begin));
    end = Math.max(-n, Math.min(n, end));
    if (w.day >= begin && w.day <= end) return true;
  }
  return false;
}

export function intervalContains(ti: TimeIntervalRuntime, ms: number): boolean {
  const w = wallClock(ms, ti.location);
  if (ti.times && !ti.times.some((t) => w.minute >= t.startMinute && w.minute < t.endMinute)) return false;
  if (ti.weekdays && !inRanges(w.weekday, ti.weekdays)) return false;
  if (ti.daysOfMonth && !dayMatches(w, ti.daysOfMonth)) return false;
  if (ti.months && !inRanges(w.month, ti.months)) return false;
  if (ti.years && !inRanges(w.year, ti.years)) return false;
  return true;
}

/** Is `ms` inside any of the named intervals? */
export function anyIntervalContains(names: readonly string[], intervals: ReadonlyMap<string, TimeIntervalRuntime[]>, ms: number): boolean {
  return names.some((n) => (intervals.get(n) ?? []).some((ti) => intervalContains(ti, ms)));
}
