/**
 * Counting tokens piece by piece: the same count as one pass on ordinary text, long words cut so a
 * count stays bounded; and on the token-count thread, never on the event loop (loading the
 * tokenizer's tables held it 140 ms on a quiet machine and seconds on a loaded one).
 */
import { describe, expect, it } from 'vitest';
import { countText } from '../../src/gateway/translate/tokens.js';
import { COUNT_EXACT_MAX, countInPieces, countedPart } from '../../src/gateway/translate/token-pieces.js';
import { watchLoop } from '../helpers/loop-hold.js';

describe('countText', () => {
  it('loads the tokenizer and counts off the event loop', async () => {
    const watch = watchLoop();
    const n = await countText('Hello, world: 42 tokens or so.');
    const prose = await countText('The quick brown fox jumps over the lazy dog. '.repeat(20_000));
    const seen = watch.stop();
    expect(n).toBeGreaterThan(5);
    expect(prose).toBeGreaterThan(150_000);
    // Measured: loading and counting on the loop held it 140-200 ms at a time; on the thread, under 10 ms.
    expect(seen.maxHoldMs, `loop held (ms); event-loop delay max ${seen.maxDelayMs.toFixed(0)} ms`).toBeLessThan(50);
  }, 120_000);

  it('counts short texts in one pass and long prose within a token per piece of the one-pass count', async () => {
    // Loaded here only after the test above, which checks that loading it holds no loop.
    const { countTokens: oneNative } = await import('gpt-tokenizer/encoding/o200k_base');
    const short = 'Hello, world: 42 tokens or so.';
    expect(await countText(short)).toBe(oneNative(short));
    const prose = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(500);
    const pieces = Math.ceil(prose.length / 2048);
    expect(Math.abs((await countText(prose)) - oneNative(prose))).toBeLessThanOrEqual(pieces);
  });

  it('counts a long text without spaces in bounded time', async () => {
    const n = await countText('xq'.repeat(50_000));
    expect(n).toBeGreaterThan(100_000 / 20);
  }, 120_000);

  it('sends only what it counts of a huge text, and extrapolates the same as counting all of it', () => {
    const huge = 'word '.repeat(COUNT_EXACT_MAX);
    const part = countedPart(huge);
    expect(part.length).toBeLessThan(COUNT_EXACT_MAX + 4096);
    const fake = (t: string) => t.split(' ').length;
    expect(countInPieces(fake, part, huge.length)).toBe(countInPieces(fake, huge));
  });
});
