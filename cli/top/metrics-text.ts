/** A reader of the Prometheus text format, enough for ctl's own /metrics: samples with labels. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = m[3] === '+Inf' ? Infinity : Number(m[3]);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** Sum of the samples named `name` whose labels include `match`. */
export function sum(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let t = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) t += s.value;
  }
  return t;
}

/**
 * A quantile from histogram buckets (`name_bucket`, all label sets added up), by linear
 * interpolation inside the bucket, as Prometheus' histogram_quantile does; undefined when empty.
 */
export function histogramQuantile(q: number, buckets: Map<number, number>): number | undefined {
  const les = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  if (total <= 0 || les.length === 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const count = buckets.get(le)!;
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      const inBucket = count - prevCount;
      return inBucket <= 0 ? le : prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/** The buckets of histogram `name` summed over every label set but `le`. */
export function bucketsOf(samples: readonly Sample[], name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    out.set(le, (out.get(le) ?? 0) + s.value);
  }
  return out;
}

/** Bucket counts of `now` minus those of `before` (the observations in between). */
export function bucketDelta(now: Map<number, number>, before: Map<number, number> | undefined): Map<number, number> {
  if (!before) return now;
  const out = new Map<number, number>();
  for (const [le, n] of now) out.set(le, Math.max(0, n - (before.get(le) ?? 0)));
  return out;
}
