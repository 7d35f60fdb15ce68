/** Formatting helpers for the wire: local date-times, the daemon's UTC offset, Go-style durations. */

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD HH:MM:SS` in the daemon's local time zone (as the origin's MySQL DATETIME). */
export function formatDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The daemon's UTC offset at `ms`, as `+HHMM` / `-HHMM`. */
export function formatTimezone(ms: number): string {
  const off = -new Date(ms).getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${sign}${pad(Math.floor(a / 60))}${pad(a % 60)}`;
}

function trimFraction(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}

/** A duration in milliseconds as Go's time.Duration.String() prints it (`680.055301ms`, `1.2s`, `2m3.5s`). */
export function formatGoDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const ns = Math.round(ms * 1e6);
  if (ns < 1000) return `${ns}ns`;
  if (ns < 1e6) return `${trimFraction(ns / 1e3, 3)}µs`;
  if (ns < 1e9) return `${trimFraction(ns / 1e6, 6)}ms`;
  const totalSeconds = ns / 1e9;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds - h * 3600 - m * 60;
  let out = `${trimFraction(s, 9)}s`;
  if (h > 0 || m > 0) out = `${m}m${out}`;
  if (h > 0) out = `${h}h${out}`;
  return out;
}
