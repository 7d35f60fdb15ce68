/**
 * Calendar windows of budgets and token limits, in UTC: a daily window starts every day at
 * `resetTime` (HH:MM), a weekly one on Monday at `resetTime`, a monthly one on the 1st at `resetTime`;
 * an hourly one (budgets only) every hour at the minute of `resetTime`.
 */
export const RESET_INTERVALS = ['daily', 'weekly', 'monthly'] as const;
export type ResetInterval = (typeof RESET_INTERVALS)[number];

export const RESET_TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

export interface Window {
  start: number;
  end: number;
}

const DAY = 86_400_000;

function hm(resetTime: string): [number, number] {
  const m = /^(\d{2}):(\d{2})$/.exec(resetTime);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** The window of `interval` that contains `now`. */
export function windowAt(interval: ResetInterval | 'hourly', resetTime: string, now: number): Window {
  const [h, mi] = hm(resetTime);
  if (interval === 'hourly') {
    const HOUR = 3_600_000;
    let start = Math.floor(now / HOUR) * HOUR + mi * 60_000;
    if (start > now) start -= HOUR;
    return { start, end: start + HOUR };
  }
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (interval) {
    case 'daily': {
      let start = Date.UTC(y, mo, day, h, mi);
      if (start > now) start -= DAY;
      return { start, end: start + DAY };
    }
    case 'weekly': {
      const sinceMonday = (d.getUTCDay() + 6) % 7;
      let start = Date.UTC(y, mo, day - sinceMonday, h, mi);
      if (start > now) start -= 7 * DAY;
      return { start, end: start + 7 * DAY };
    }
    case 'monthly': {
      let start = Date.UTC(y, mo, 1, h, mi);
      let next = Date.UTC(y, mo + 1, 1, h, mi);
      if (start > now) {
        next = start;
        start = Date.UTC(y, mo - 1, 1, h, mi);
      }
      return { start, end: next };
    }
  }
}
