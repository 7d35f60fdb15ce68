/** Times and durations as the consoles show them. */

const UNITS: Array<[string, number]> = [
  ['y', 365 * 86400_000],
  ['w', 7 * 86400_000],
  ['d', 86400_000],
  ['h', 3600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** `1d2h3m` (Prometheus' model.Duration style, two largest units); '0s' under a second. */
export function formatDuration(ms: number): string {
  let left = Math.max(0, Math.round(ms));
  const parts: string[] = [];
  for (const [u, n] of UNITS) {
    if (left >= n) {
      parts.push(`${Math.floor(left / n)}${u}`);
      left %= n;
    }
    if (parts.length === 2) break;
  }
  return parts.length ? parts.join('') : '0s';
}

/** Parse `2h`, `1d12h`, `90m`, `1w` (ms); NaN when not a duration. */
export function parseDuration(s: string): number {
  const t = s.trim();
  if (!/^(\d+(ms|y|w|d|h|m|s))+$/.test(t)) return NaN;
  let ms = 0;
  for (const m of t.matchAll(/(\d+)(ms|y|w|d|h|m|s)/g)) {
    const n = Number(m[1]);
    ms += m[2] === 'ms' ? n : n * UNITS.find(([u]) => u === m[2])![1];
  }
  return ms;
}

/** `3m ago` / `in 2h`. */
export function relative(iso: string | number | Date, now = Date.now()): string {
  const t = new Date(iso).getTime();
  if (!Number.isFinite(t)) return '';
  const d = t - now;
  return d < 0 ? `${formatDuration(-d)} ago` : `in ${formatDuration(d)}`;
}

/** Local date and time, to the minute: `2026-11-27 21:05`. */
export function localTime(iso: string | number | Date): string {
  const d = new Date(iso);
  if (!Number.isFinite(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** The value of an `<input type="datetime-local">` for a time. */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
