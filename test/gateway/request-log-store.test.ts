/**
 * The request log is written up to 16 rows per INSERT: a flush of any size must store exactly what
 * one INSERT per row stores, in the same order (ids ascending in queue order).
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { SqliteRequestLog, type RequestLogEntry } from '../../src/gateway/request-log/store.js';
import { RequestLogStore } from '../../src/gateway/request-log/reader.js';
import { sqliteSql } from '../../src/gateway/sql.js';
import type { Store } from '../../src/store/index.js';
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

/** The writer and the reads of one SQLite file. */
function requestLog(store: Store): SqliteRequestLog & { reads: RequestLogStore } {
  return Object.assign(new SqliteRequestLog(store), { reads: new RequestLogStore(sqliteSql(store), () => 0) });
}

async function rowsOf(log: ReturnType<typeof requestLog>): Promise<unknown[]> {
  return (await log.reads.requestLogs({ limit: 1000, offset: 0 })).rows;
}

describe('request log batches', () => {
  it.each([1, 5, 16, 17, 37, 500])('a flush of %i rows stores what one INSERT per row does', async (n) => {
    const entries = Array.from({ length: n }, (_, i) => entry(i + 1));
    const batched = requestLog(openStore(':memory:', GATEWAY_MIGRATIONS));
    const single = requestLog(openStore(':memory:', GATEWAY_MIGRATIONS));
    batched.insert(entries);
    for (const e of entries) single.insert([e]);
    const got = await rowsOf(batched);
    expect(got).toEqual(await rowsOf(single));
    expect(got).toHaveLength(Math.min(n, 1000));
    // Newest first, ids ascending in queue order.
    expect((got as { requestId: string; id: number }[]).map((r) => r.requestId)).toEqual(entries.map((e) => e.requestId).reverse());
  });
});

describe('start-up combo counts', () => {
  it('read in slices, give what one GROUP BY gives, and hold the loop a few ms at a time', async () => {
    const store = openStore(':memory:', GATEWAY_MIGRATIONS);
    const db = requestLog(store);
    const now = 1_800_000_000_000;
    const entries: RequestLogEntry[] = [];
    for (let i = 0; i < 60_000; i++) {
      entries.push({
        ...entry(i),
        ts: now - (i % 1000) * 60_000 - (i > 50_000 ? 30 * 86_400_000 : 0),
        combo: i % 7 === 0 ? undefined : `combo-${i % 5}`,
        provider: `p${i % 3}`,
        model: `m${i % 4}`,
        status: i % 11 === 0 ? 500 : 200,
      } as RequestLogEntry);
    }
    for (let i = 0; i < entries.length; i += 5000) db.insert(entries.slice(i, i + 5000));
    const since = now - 7 * 86_400_000;
    const once = store
      .prepare(
        `SELECT combo, provider || '/' || model AS target, COUNT(*) AS requests, SUM(status >= 400) AS errors, AVG(latency_ms) AS avgLatency
         FROM request_log WHERE combo IS NOT NULL AND provider IS NOT NULL AND ts >= ? GROUP BY combo, target`,
      )
      .all(since) as { avgLatency: number }[];
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const sliced = await db.reads.comboTargetCounts(since);
    clearInterval(ticker);
    expect(once.length).toBeGreaterThan(10);
    expect(sliced.map((r) => ({ ...r, avgLatency: Number(r.avgLatency.toFixed(9)) }))).toEqual(once.map((r) => ({ ...r, avgLatency: Number(r.avgLatency.toFixed(9)) })));
    // 60,000 rows in slices of 8,192 ids: the loop turned between them.
    expect(turns).toBeGreaterThan(2);
  });
});
