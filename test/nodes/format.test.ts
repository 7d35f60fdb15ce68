import { describe, expect, it } from 'vitest';
import { formatDateTime, formatGoDuration, formatTimezone } from '../../src/nodes/format.js';

describe('format', () => {
  it('prints Go durations', () => {
    expect(formatGoDuration(680.055301)).toBe('680.055301ms');
    expect(formatGoDuration(0.5)).toBe('500µs');
    expect(formatGoDuration(1500)).toBe('1.5s');
    expect(formatGoDuration(125_000)).toBe('2m5s');
    expect(formatGoDuration(0.0001)).toBe('100ns');
  });

  it('prints local date-times and the UTC offset', () => {
    expect(formatDateTime(Date.now())).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(formatTimezone(Date.now())).toMatch(/^[+-]\d{4}$/);
  });
});
