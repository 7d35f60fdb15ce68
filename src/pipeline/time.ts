import type { Clock } from '../http/clock.js';

/** ISO 8601 UTC timestamp of the clock's now (all stored times use this form, so they sort as text). */
export function nowIso(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

// Date, time with minutes at least, optional seconds and fraction, optional zone (Z or ±HH:MM / ±HHMM).
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parse an ISO 8601 date-time into a normalised UTC ISO string, or null when it is not one.
 * A time without a zone is taken as UTC. Out-of-range parts (month 13, 25:00, Feb 30) are refused.
 */
export function parseIsoDateTime(text: string): string | null {
  const m = ISO_8601.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '0', frac = '0', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return null;
    offsetMin = sign * (oh * 60 + om);
  }
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMin * 60_000;
  return new Date(t).toISOString();
}

/** Start of the UTC day / month containing `ms`, as ISO strings. */
export function startOfUtcDay(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toISOString();
}

export function startOfUtcMonth(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
}
