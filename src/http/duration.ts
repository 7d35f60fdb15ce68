const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A configuration duration: `500ms`, `10s`, `1m30s`, `2h` (Go style, without days), or a plain
 * number of seconds, to milliseconds; null when it is not a duration.
 */
export function parseDuration(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : null;
  if (typeof value !== 'string' || value === '') return null;
  if (value === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
  let total = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value))) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    if (re.lastIndex === value.length) return total;
  }
  return null;
}
