import { describe, expect, it } from 'vitest';
import { anyIntervalContains, intervalContains } from '../../src/alertmanager/dispatch/time-intervals.js';

const at = (iso: string) => Date.parse(iso);

describe('time intervals (timeinterval.ContainsTime)', () => {
  it('times are [start, end) minutes of the day, on the location\'s wall clock', () => {
    const office = { times: [{ startMinute: 9 * 60, endMinute: 17 * 60 }], location: 'Europe/Berlin' };
    expect(intervalContains(office, at('2026-01-05T08:00:00Z'))).toBe(true); // 09:00 in Berlin
    expect(intervalContains(office, at('2026-01-05T07:59:00Z'))).toBe(false);
    expect(intervalContains(office, at('2026-01-05T16:00:00Z'))).toBe(false); // 17:00: end excluded
    expect(intervalContains({ times: office.times }, at('2026-01-05T16:30:00Z'))).toBe(true); // UTC by default
  });
  it('weekdays, days of the month from the end, months and years all have to match', () => {
    const weekend = { weekdays: [{ begin: 6, end: 6 }, { begin: 0, end: 0 }] };
    expect(intervalContains(weekend, at('2026-01-03T12:00:00Z'))).toBe(true); // Saturday
    expect(intervalContains(weekend, at('2026-01-05T12:00:00Z'))).toBe(false);
    const lastTwoDays = { daysOfMonth: [{ begin: -2, end: -1 }] };
    expect(intervalContains(lastTwoDays, at('2026-02-27T12:00:00Z'))).toBe(true);
    expect(intervalContains(lastTwoDays, at('2026-02-26T12:00:00Z'))).toBe(false);
    expect(intervalContains({ daysOfMonth: [{ begin: 31, end: 31 }] }, at('2026-02-28T12:00:00Z'))).toBe(false);
    const q1in2026 = { months: [{ begin: 1, end: 3 }], years: [{ begin: 2026, end: 2026 }] };
    expect(intervalContains(q1in2026, at('2026-03-31T23:59:00Z'))).toBe(true);
    expect(intervalContains(q1in2026, at('2027-01-01T00:00:00Z'))).toBe(false);
  });
  it('a name matches when any of its intervals does', () => {
    const m = new Map([['off', [{ weekdays: [{ begin: 0, end: 0 }] }, { times: [{ startMinute: 0, endMinute: 60 }] }]]]);
    expect(anyIntervalContains(['off'], m, at('2026-01-05T00:30:00Z'))).toBe(true);
    expect(anyIntervalContains(['off'], m, at('2026-01-05T12:00:00Z'))).toBe(false);
    expect(anyIntervalContains(['missing'], m, at('2026-01-05T00:30:00Z'))).toBe(false);
  });
});
