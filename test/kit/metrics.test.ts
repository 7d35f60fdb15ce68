/**
 * Component histograms (src/http/metrics.ts): kept as bucket counts from the first observation and
 * rendered in prom-client's own layout; nothing observed before the first scrape is lost.
 */
import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { BucketHistogram, ComponentMetrics } from '../../src/http/metrics.js';

const BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];
const LABELS = ['provider', 'model'];

function observations(): [Record<string, string>, number][] {
  const out: [Record<string, string>, number][] = [];
  for (let i = 0; i < 500; i++) {
    const labels = { provider: `p${i % 3}`, model: i % 2 ? 'a' : 'b"quoted"\\' };
    // Bucket edges exactly, values between them, above the last, and zero.
    out.push([labels, [0, 0.005, 0.007, 0.01, 0.3, 1, 4.99, 5, 7.5, 120][i % 10]!]);
  }
  return out;
}

/** The metric's lines without its HELP/TYPE header, sorted (series order is not part of the format). */
function lines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .sort();
}

describe('component histograms', () => {
  it('render the same text as a prom-client histogram given the same observations', async () => {
    const theirs = new Registry();
    const real = new Histogram({ name: 'x_seconds', help: 'h', labelNames: LABELS, buckets: BUCKETS, registers: [theirs] });
    const ours = new Registry();
    const mine = new BucketHistogram('x_seconds', 'h', LABELS, BUCKETS);
    ours.registerMetric(mine as unknown as import('prom-client').Metric);
    for (const [labels, v] of observations()) {
      real.observe(labels, v);
      mine.observe(labels, v);
    }
    const want = await theirs.metrics();
    const got = await ours.metrics();
    expect(lines(got)).toEqual(lines(want));
    expect(got.split('\n').slice(0, 2)).toEqual(want.split('\n').slice(0, 2));
  });

  it('count every observation made before the first scrape', async () => {
    const metrics = new ComponentMetrics(() => undefined);
    const observe = metrics.histogram('ctl_test_duration_seconds', 'Test.', ['provider'], BUCKETS);
    for (let i = 0; i < 25_000; i++) observe({ provider: 'lo' }, i % 2 ? 0.00390625 : 2);
    const { text } = await metrics.render();
    expect(text).toMatch(/^ctl_test_duration_seconds_count\{provider="lo"\} 25000$/m);
    expect(text).toMatch(/^ctl_test_duration_seconds_bucket\{le="0\.005",provider="lo"\} 12500$/m);
    expect(text).toMatch(/^ctl_test_duration_seconds_bucket\{le="\+Inf",provider="lo"\} 25000$/m);
    expect(text).toMatch(/^ctl_test_duration_seconds_sum\{provider="lo"\} 25048\.828125$/m);
    // And afterwards, observations keep counting.
    observe({ provider: 'lo' }, 0.05);
    expect((await metrics.render()).text).toMatch(/^ctl_test_duration_seconds_count\{provider="lo"\} 25001$/m);
  });
});
