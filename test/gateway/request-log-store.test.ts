/**
 * The request log is written up to 16 rows per INSERT: a flush of any size must store exactly what
 * one INSERT per row stores, in the same order (ids ascending in queue order).
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { SqliteRequestLog, type RequestLogEntry } from '../../src/gateway/request-log/store.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';

function entry(i: number): RequestLogEntry {
  const odd = i % 2 === 1;
  return {
    requestId: `req-${i}`,
    ts: 1_700_000_000_000 + i,
    endpoint: odd ? 'messages' : 'chat',
    ...(odd ? { apiKeyId: 'k1', sessionId: `s${i}`, combo: 'smart', error: `boom ${i}`, ttfbMs: i, cache: 'miss' as const, costSaved: 0.5 } : {}),
    requestedModel: `m/${i}`,
    strategy: odd ? 'priority' : 'single',
    provider: 'p',
    model: `m${i}`,
    account: 'default',
    status: odd ? 502 : 200,
    stream: odd,
    tokensIn: i,
    tokensOut: 2 * i,
    tokensCached: i % 3,
    tokensReasoning: i % 5,
    ...(i % 4 === 0 ? { tokensCacheWrite: i } : {}),
    cost: i / 1e7,
    latencyMs: 10 + i,
    fallbackAttempts: i % 2,
    attempts: [{ provider: 'p', model: `m${i}`, account: 'default', outcome: odd ? 'error' : 'success', status: odd ? 502 : 200, latencyMs: i }],
    clientAborted: i % 7 === 0,
  };
}

function rowsOf(log: SqliteRequestLog): unknown[] {
  return log.query({ limit: 1000, offset: 0 }).rows;
}

describe('request log batches', () => {
  it.each([1, 5, 16, 17, 37, 500])('a flush of %i rows stores what one INSERT per row does', (n) => {
    const entries = Array.from({ length: n }, (_, i) => entry(i + 1));
    const batched = new SqliteRequestLog(openStore(':memory:', GATEWAY_MIGRATIONS));
    const single = new SqliteRequestLog(openStore(':memory:', GATEWAY_MIGRATIONS));
    batched.insert(entries);
    for (const e of entries) single.insert([e]);
    const got = rowsOf(batched);
    expect(got).toEqual(rowsOf(single));
    expect(got).toHaveLength(Math.min(n, 1000));
    // Newest first, ids ascending in queue order.
    expect((got as { requestId: string; id: number }[]).map((r) => r.requestId)).toEqual(entries.map((e) => e.requestId).reverse());
  });
});
