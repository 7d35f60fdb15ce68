import { describe, expect, it } from 'vitest';
import { formatModelDuration, formatTime, GO_ZERO_MS, parseDateTime, parseGoDuration, parseModelDuration, parseRfc3339Fast } from '../../src/alertmanager/timefmt.js';

describe('parseDateTime (strfmt 0.21 layouts)', () => {
  it.each([
    ['2030-01-01T10:00:00Z', '2030-01-01T10:00:00.000Z'],
    ['2030-01-01T10:00:00.123456789+02:00', '2030-01-01T08:00:00.123Z'],
    ['2030-01-01T10:00:00.123+0200', '2030-01-01T08:00:00.123Z'],
    ['2030-01-01T10:00:00', '2030-01-01T10:00:00.000Z'],
    ['2030-01-01T10:00Z', '2030-01-01T10:00:00.000Z'],
    ['2030-01-01T10:00', '2030-01-01T10:00:00.000Z'],
    ['2030-01-01 10:00:00', '2030-01-01T10:00:00.000Z'],
    ['2030-01-01T1:00:00Z', '2030-01-01T01:00:00.000Z'],
    ['2030-01-01T10:00:00,5Z', '2030-01-01T10:00:00.500Z'],
  ])('%s', (s, iso) => {
    expect(formatTime(parseDateTime(s))).toBe(iso);
  });
  it('"" is the epoch and Go zero time is recognisable', () => {
    expect(parseDateTime('')).toBe(0);
    expect(parseDateTime('0001-01-01T00:00:00Z')).toBe(GO_ZERO_MS);
    expect(parseDateTime('0001-01-01T00:00:00.000Z')).toBe(GO_ZERO_MS);
  });
  it.each([
    ['x', 'parsing time "x" as "2006-01-02 15:04:05": cannot parse "x" as "2006"'],
    ['2030-01-01', 'parsing time "2030-01-01" as "2006-01-02 15:04:05": cannot parse "" as "15"'],
    ['2030-13-01T00:00:00Z', 'parsing time "2030-13-01T00:00:00Z": month out of range'],
    ['2030-02-30T00:00:00Z', 'parsing time "2030-02-30T00:00:00Z" as "2006-01-02 15:04:05": cannot parse "T00:00:00Z" as " "'],
    ['2030-01-01T10:00:00+0200', 'parsing time "2030-01-01T10:00:00+0200" as "2006-01-02 15:04:05": cannot parse "T10:00:00+0200" as " "'],
    ['2030-1-01', 'parsing time "2030-1-01" as "2006-01-02 15:04:05": cannot parse "1-01" as "01"'],
    ['é', 'parsing time "\\xc3\\xa9" as "2006-01-02 15:04:05": cannot parse "\\xc3\\xa9" as "2006"'],
  ])('%s fails like Go', (s, msg) => {
    expect(() => parseDateTime(s)).toThrow(msg);
  });
});

describe('durations', () => {
  it('model.Duration', () => {
    expect(parseModelDuration('5m')).toBe(300000);
    expect(parseModelDuration('1h30m')).toBe(5400000);
    expect(parseModelDuration('0')).toBe(0);
    expect(() => parseModelDuration('5x')).toThrow('not a valid duration string: "5x"');
    expect(formatModelDuration(5400000)).toBe('1h30m');
    expect(formatModelDuration(2 * 86400000)).toBe('2d');
    expect(formatModelDuration(14 * 86400000)).toBe('2w');
    expect(formatModelDuration(0)).toBe('0s');
  });
  it('Go time.Duration', () => {
    expect(parseGoDuration('1m30s')).toBe(90000);
    expect(parseGoDuration('1.5h')).toBe(5400000);
    expect(() => parseGoDuration('5')).toThrow('missing unit');
  });
});

describe('the RFC3339 fast path', () => {
  it('reads what the layouts read, and leaves the rest to them', () => {
    expect(parseRfc3339Fast('2030-01-02T03:04:05Z')).toBe(Date.parse('2030-01-02T03:04:05Z'));
    expect(parseRfc3339Fast('2030-01-02T03:04:05.1234567+02:30')).toBe(Date.parse('2030-01-02T00:34:05.123Z'));
    expect(parseRfc3339Fast('2030-01-02T03:04:05.9-01:00')).toBe(Date.parse('2030-01-02T04:04:05.900Z'));
    for (const odd of ['2030-02-30T00:00:00Z', '2030-01-02T24:00:00Z', '2030-01-02 03:04:05Z', '2030-01-02T03:04:05', '2030-01-02T03:04:05.Z', '2030-01-02T03:04:05z', '2030-01-02T03:04:05+0100', '2030-01-02T03:04:05Z ']) {
      expect(parseRfc3339Fast(odd), odd).toBeUndefined();
    }
  });
  it('formats repeated times from its memo unchanged', () => {
    const times = [T(1), T(2), T(3), T(1), T(4), T(5), T(1), T(2)];
    for (const ms of times) expect(formatTime(ms)).toBe(new Date(ms).toISOString());
  });
  it('stays right past its memo size (three thousand distinct times, each asked twice, far apart)', () => {
    const times = Array.from({ length: 3000 }, (_, i) => T(i * 7));
    for (const round of [0, 1]) for (const ms of times) expect(formatTime(ms), `round ${round}`).toBe(new Date(ms).toISOString());
    expect(formatTime(Date.parse('0001-01-01T00:00:00Z') - 1000)).toBe('0000-12-31T23:59:59.000Z');
  });
});

function T(n: number): number {
  return Date.parse('2030-01-01T00:00:00Z') + n * 1000 + n;
}
