/** Counting tokens piece by piece: the same count as one pass on ordinary text, and long words cut so a count stays bounded. */
import { describe, expect, it } from 'vitest';
import { countText, loadCounter } from '../../src/gateway/translate/tokens.js';

describe('countText', () => {
  it('counts short texts in one pass and long prose within a token per piece of the one-pass count', async () => {
    const count = await loadCounter();
    const short = 'Hello, world: 42 tokens or so.';
    expect(await countText(count, short)).toBe(count(short));
    const prose = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(500);
    const pieces = Math.ceil(prose.length / 2048);
    expect(Math.abs((await countText(count, prose)) - count(prose))).toBeLessThanOrEqual(pieces);
  });

  it('gives the loop back while it counts a long text without spaces', async () => {
    const count = await loadCounter();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const n = await countText(count, 'xq'.repeat(50_000));
    clearInterval(timer);
    expect(n).toBeGreaterThan(100_000 / 20);
    expect(ticks).toBeGreaterThan(0);
  }, 120_000);
});
