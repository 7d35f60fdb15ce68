import { describe, expect, it } from 'vitest';
import { loadPipelineConfig } from '../../src/pipeline/config.js';
import { parseDuration } from '../../src/http/duration.js';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword, verifyPassword, isPasswordHash, stableHashForPassword } from '../../src/pipeline/auth/password.js';
import { parseIsoDateTime } from '../../src/pipeline/time.js';
import { splitIntoParts, weightedLength } from '../../src/pipeline/drafting/length.js';
import { extractJson, parseDrafts } from '../../src/pipeline/drafting/parse.js';
import { hackerNewsEndpoints } from '../../src/pipeline/sources/hackernews.js';
import { normaliseUrl } from '../../src/pipeline/sources/types.js';
import { parseFeed } from '../../src/pipeline/sources/feed.js';
import { pickBatch, rankItems } from '../../src/pipeline/ranking.js';
import { checkProposal } from '../../src/pipeline/proposals/generate.js';
import { engagementRate } from '../../src/pipeline/data/posts.js';
import { atomDocument, rdfDocument, rssDocument, sampleEntries } from '../fakes/rss.js';

describe('config', () => {
  it('has documented defaults and hashes the password', () => {
    const c = loadPipelineConfig({ 'owner-password': 'pw' }, {});
    expect(c.hnApiBaseUrl).toBe('https://hacker-news.firebaseio.com/v0');
    expect(c.xApiBaseUrl).toBe('https://api.x.com/2');
    expect(c.xApiToken).toBeNull();
    expect(c.batchSize).toBe(5);
    expect(c.maxPageSize).toBe(100);
    expect(c.loginRateLimit).toEqual({ limit: 10, interval: 60 });
    expect(c.ownerPasswordHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(c)).not.toContain('"pw"');
  });
  it('reads the environment', () => {
    const c = loadPipelineConfig({}, { PIPELINE_OWNER_PASSWORD: 'x', PIPELINE_MODEL: 'openai/gpt-4o-mini', PIPELINE_X_API_TOKEN: 't' });
    expect(c.ownerPasswordHash).not.toBeNull();
    expect(c.envModel).toBe('openai/gpt-4o-mini');
    expect(c.xApiToken).toBe('t');
    expect(loadPipelineConfig({}, {}).ownerPasswordHash).toBeNull();
  });
  it('refuses unknown keys and bad values with the key named', () => {
    expect(() => loadPipelineConfig({ 'owner-pasword': 'x' }, {})).toThrow(/owner-pasword: unknown setting/);
    expect(() => loadPipelineConfig({ 'batch-size': 0 }, {})).toThrow(/batch-size/);
    expect(() => loadPipelineConfig({ 'fetch-timeout': 'soon' }, {})).toThrow(/fetch-timeout/);
    expect(() => loadPipelineConfig({ 'x-api-base-url': 'ftp://x' }, {})).toThrow(/x-api-base-url/);
    expect(() => loadPipelineConfig({ 'owner-password-hash': 'plain' }, {})).toThrow(/owner-password-hash/);
    expect(() => loadPipelineConfig({ 'login-rate-limit': { limit: 0, interval: '1m' } }, {})).toThrow(/login-rate-limit/);
    expect(loadPipelineConfig({ 'login-rate-limit': { limit: 3, interval: '2m' } }, {}).loginRateLimit).toEqual({ limit: 3, interval: 120 });
  });
  it('parses durations', () => {
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration(2)).toBe(2000);
    expect(parseDuration('10 s')).toBeNull();
  });
});

describe('password', () => {
  it('verifies against the scrypt hash', async () => {
    const h = hashPassword('s3cret');
    expect(isPasswordHash(h)).toBe(true);
    expect(await verifyPassword('s3cret', h)).toBe(true);
    expect(await verifyPassword('S3cret', h)).toBe(false);
    expect(await verifyPassword('s3cret', 'garbage')).toBe(false);
  });

  it('checks concurrent logins on its one thread, each against its own hash', async () => {
    const a = hashPassword('alpha');
    const b = hashPassword('beta');
    const got = await Promise.all([verifyPassword('alpha', a), verifyPassword('beta', a), verifyPassword('beta', b), verifyPassword('alpha', b), verifyPassword('alpha', a)]);
    expect(got).toEqual([true, false, true, false, true]);
  });

  it('keeps the hash of an unchanged clear password across starts, and makes a new one when it changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-pw-'));
    try {
      const path = join(dir, 'secrets', 'owner.hash');
      const first = stableHashForPassword('pw-one', path);
      expect(stableHashForPassword('pw-one', path)).toBe(first);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const changed = stableHashForPassword('pw-two', path);
      expect(changed).not.toBe(first);
      expect(readFileSync(path, 'utf8').trim()).toBe(changed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ISO 8601', () => {
  it('normalises to UTC and refuses nonsense', () => {
    expect(parseIsoDateTime('2030-01-02T03:04:05Z')).toBe('2030-01-02T03:04:05.000Z');
    expect(parseIsoDateTime('2030-01-02T03:04:05+02:00')).toBe('2030-01-02T01:04:05.000Z');
    expect(parseIsoDateTime('2030-01-02T03:04')).toBe('2030-01-02T03:04:00.000Z');
    expect(parseIsoDateTime('2030-01-02 03:04:05.123456-0130')).toBe('2030-01-02T04:34:05.123Z');
    for (const bad of ['tomorrow', '2030-02-30T00:00:00Z', '2030-13-01T00:00Z', '2030-01-01', '2030-01-01T24:00Z', '1700000000']) {
      expect(parseIsoDateTime(bad), bad).toBeNull();
    }
  });
});

describe('post length', () => {
  it('counts links as 23 and wide characters as 2', () => {
    expect(weightedLength('hello')).toBe(5);
    expect(weightedLength('see https://example.com/a/very/long/path/that/goes/on/and/on')).toBe(4 + 23);
    expect(weightedLength('日本')).toBe(4);
    expect(weightedLength('🙂')).toBe(2);
  });
  it('splits long text into parts that fit', () => {
    const text = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const parts = splitIntoParts(text, 280)!;
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(weightedLength(p)).toBeLessThanOrEqual(280);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(text);
    expect(splitIntoParts('x'.repeat(300), 280)).toBeNull();
  });
});

describe('model output repair', () => {
  const rules = { maxLength: 280, useHashtags: false, threads: false };
  it('finds JSON in fences and prose', () => {
    expect(extractJson('```json\n{"a":1}\n```')).toEqual({ a: 1 });
    expect(extractJson('Sure! Here it is: {"posts": []} Enjoy.')).toEqual({ posts: [] });
    expect(extractJson('no json here')).toBeUndefined();
  });
  it('accepts several shapes and repairs per post', () => {
    const r = parseDrafts(
      JSON.stringify({
        posts: [
          { item: 2, content: '  Second   item #news #tech ' },
          'plain string post',
          { item: 1, content: '' },
          { item: 1, content: 'x'.repeat(300) },
          { item: 9, content: 'out of range number, position 4 is beyond 3 items' },
        ],
      }),
      3,
      rules,
    );
    expect(r.json).toBe(true);
    expect(r.posts.map((p) => [p.item, p.content])).toEqual([[1, 'Second item']]);
    // Entry 0 → item index 1 (model said 2); entry 1 (string) → position 1 → duplicate of item 1 → rejected.
    expect(r.posts[0]).toMatchObject({ item: 1, content: 'Second item', thread: [] });
    expect(r.posts[0]!.repairs).toContain('hashtags removed (policy never)');
    const reasons = r.rejected.map((x) => x.reason).join(' | ');
    expect(reasons).toMatch(/second post for item 2/);
    expect(reasons).toMatch(/no text/);
    expect(reasons).toMatch(/too long \(300 > 280/);
    expect(reasons).toMatch(/refers to no research item/);
  });
  it('splits a long post into a thread when threads are on', () => {
    const long = Array.from({ length: 30 }, (_, i) => `Point ${i} matters.`).join(' ');
    const r = parseDrafts(JSON.stringify({ posts: [{ item: 1, content: long }] }), 1, { ...rules, threads: true });
    expect(r.posts).toHaveLength(1);
    expect(r.posts[0]!.thread.length).toBeGreaterThan(0);
    expect(r.posts[0]!.repairs).toContain('long text split into a thread');
  });
  it('joins a thread when threads are off', () => {
    const r = parseDrafts(JSON.stringify([{ item: 1, content: 'One.', thread: ['Two.'] }]), 1, rules);
    expect(r.posts[0]).toMatchObject({ content: 'One. Two.', thread: [] });
  });
  it('never throws on garbage', () => {
    for (const g of ['', 'null', '42', '{"posts": "no"}', '[1, 2, null]', '{"posts":[{"item":"x","content":7}]}', '\u0000\u0001']) {
      expect(() => parseDrafts(g, 2, rules)).not.toThrow();
    }
    expect(parseDrafts('not json', 2, rules)).toMatchObject({ json: false, posts: [] });
  });
});

describe('sources', () => {
  it('picks the Hacker News list from the source URL', () => {
    const base = 'http://127.0.0.1:1/v0';
    expect(hackerNewsEndpoints('', base)).toEqual({ listUrl: `${base}/topstories.json`, itemBase: base });
    expect(hackerNewsEndpoints('https://news.ycombinator.com/best', base).listUrl).toBe(`${base}/beststories.json`);
    expect(hackerNewsEndpoints('https://news.ycombinator.com/newest', base).listUrl).toBe(`${base}/newstories.json`);
    expect(hackerNewsEndpoints('http://127.0.0.1:9/v0/askstories.json', base)).toEqual({ listUrl: 'http://127.0.0.1:9/v0/askstories.json', itemBase: 'http://127.0.0.1:9/v0' });
  });
  it('normalises URLs for de-duplication', () => {
    expect(normaliseUrl('https://www.Example.com/a/?utm_source=x&id=3#frag')).toBe('example.com/a?id=3');
    expect(normaliseUrl('mailto:x@y')).toBeNull();
  });
  const src = { id: 1, name: 'feed', category: 'tech' };
  it('parses RSS 2.0, RSS 1.0 and Atom', () => {
    const entries = sampleEntries(Date.parse('2030-01-01T12:00:00Z'), 'T', 'b.example.com');
    for (const doc of [rssDocument(entries), atomDocument(entries), rdfDocument(entries)]) {
      const items = parseFeed(doc, src);
      expect(items).toHaveLength(3);
      expect(items[0]).toMatchObject({ title: 'T story 1: databases & caching', url: 'https://b.example.com/posts/1', sourceId: 1, category: 'tech' });
      expect(items[0]!.publishedAt).toBe(Date.parse('2030-01-01T11:00:00Z'));
      expect(items[0]!.keys).toContain('b.example.com/posts/1');
    }
    expect(parseFeed(rssDocument(entries), src)[0]!.summary).toBe('Summary 1 with markup');
  });
  it('refuses what is not a feed', () => {
    expect(() => parseFeed('{"a":1}', src)).toThrow(/not XML/);
    expect(() => parseFeed('<rss><channel><item><title>x</channel></rss>', src)).toThrow(/not well-formed/);
    expect(() => parseFeed('<html><body/></html>', src)).toThrow(/no <rss>/);
  });
  it('does not expand DOCTYPE entities', () => {
    const doc = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><rss><channel><item><title>&b;</title><link>https://e.com/1</link></item></channel></rss>';
    const items = parseFeed(doc, src);
    expect(items[0]?.title ?? '').not.toContain('aaaa');
  });
});

describe('ranking', () => {
  const now = Date.parse('2030-01-01T12:00:00Z');
  const item = (title: string, sourceId: number, hoursOld: number, score = 0) => ({
    keys: [title],
    title,
    url: null,
    score,
    comments: 0,
    publishedAt: now - hoursOld * 3_600_000,
    summary: '',
    sourceId,
    sourceName: `s${sourceId}`,
    category: '',
  });
  it('prefers fresh, popular, on-topic items and spreads sources', () => {
    const ranked = rankItems([item('old', 1, 48, 10), item('fresh', 1, 1), item('popular', 1, 3, 900), item('rust news', 2, 6)], ['Rust'], now);
    expect(ranked[0]!.title).toBe('popular');
    expect(ranked.find((r) => r.title === 'rust news')!.matchedTopics).toEqual(['rust']);
    const picked = pickBatch(ranked, 2);
    expect(new Set(picked.map((p) => p.sourceId)).size).toBe(2);
  });
});

describe('proposals and metrics', () => {
  const current = { tone: 'calm', topics: ['a'], hashtag_policy: 'never' as const, thread_preference: false };
  it('keeps only valid, real changes', () => {
    expect(checkProposal({ changes: { tone: 'calm' } }, current)).toBe('proposal changes nothing');
    expect(checkProposal({ changes: { hashtag_policy: 'sometimes' } }, current)).toMatch(/hashtag_policy/);
    expect(checkProposal({ title: 'More hashtags', changes: { hashtag_policy: 'always', tone: 'calm' } }, current)).toMatchObject({
      title: 'More hashtags',
      proposed_value: { hashtag_policy: 'always' },
      current_value: { hashtag_policy: 'never' },
    });
  });
  it('computes the engagement rate', () => {
    expect(engagementRate({ impressions: 0, likes: 5, retweets: 1, replies: 1 })).toBe(0);
    expect(engagementRate({ impressions: 1000, likes: 30, retweets: 5, replies: 5 })).toBe(4);
    expect(engagementRate({ impressions: 3, likes: 1, retweets: 0, replies: 0 })).toBe(33.33);
  });
});
