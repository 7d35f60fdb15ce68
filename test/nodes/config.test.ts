import { describe, expect, it } from 'vitest';
import { parseConfig, DEFAULT_CONFIG } from '../../src/nodes/config.js';

describe('config', () => {
  it('defaults contact nothing and validate keys', () => {
    const c = parseConfig({});
    expect(c).toEqual(DEFAULT_CONFIG);
    expect(c.crawl.seeds).toEqual([]);
    expect(c.prices.url).toBe('');
    expect(c.balances.rpc).toBe('');
    expect(parseConfig({ poll: { interval: 60 }, crawl: { seeds: ['seed.example:30003'] } }).poll.interval).toBe(60);
    expect(() => parseConfig({ poll: { interval: 'x' } })).toThrow(/nodes.poll.interval must be a number/);
    expect(() => parseConfig({ poll: 5 })).toThrow(/nodes.poll must be a mapping/);
    expect(() => parseConfig({ prices: { url: 'ftp://x' } })).toThrow(/prices.url/);
    expect(() => parseConfig({ crawl: { seeds: [''] } })).toThrow(/seeds/);
    expect(() => parseConfig({ 'rate-limit': { limit: 0 } })).toThrow(/rate-limit.limit/);
    expect(() => parseConfig({ poll: { intervall: 5 } })).toThrow(/nodes.poll.intervall is not a known setting/);
    expect(() => parseConfig({ crawler: {} })).toThrow(/nodes.crawler is not a known setting/);
  });
});
