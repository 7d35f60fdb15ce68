/**
 * The gateway's stores written once on the kit's query layer (store/sql.ts) answer the same on
 * both databases: each case runs on a SQLite file with the gateway's migrations and on a private
 * PostgreSQL with the shared ones (the gateway's tables under `gw_`), and asserts the same answers;
 * where the databases differ on purpose (one daemon, or several taking work in turn) the case says
 * which does what.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openStore, type Store } from '../../src/store/index.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import type { Sql } from '../../src/store/sql.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { gatewayPgMigrations } from '../../src/gateway/schema.js';
import { sharedSql, sqliteSql } from '../../src/gateway/sql.js';
import { FileStore, type FileRecord } from '../../src/gateway/files/store.js';
import { BatchStore, SharedBatchStore, type BatchRecord } from '../../src/gateway/batches/store.js';
import { SqlDeliveryQueue, type DeliveryRecord } from '../../src/gateway/webhooks/store.js';
import { SqliteRequestLog, type RequestLogEntry } from '../../src/gateway/request-log/store.js';
import { RequestLogStore } from '../../src/gateway/request-log/reader.js';
import { PgRequestLog } from '../../src/gateway/request-log/shared-log.js';
import { MemoryStore, type MemoryRecord } from '../../src/gateway/memory/store.js';
import { postgresForThisFile } from '../helpers/file-postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';

const silent = pino({ level: 'silent' });

/** One database for a case: the query layer, and the SQLite file or the PostgreSQL connection behind it. */
interface Backend {
  sql: Sql;
  store?: Store;
  pg?: SharedPostgres;
}

const server = PG_BIN ? postgresForThisFile() : undefined;
if (!PG_BIN) console.log(PG_SKIP_REASON);
let databases = 0;

/** `fn` on a fresh SQLite file and on a fresh PostgreSQL database. */
function bothBackends(title: string, fn: (b: Backend) => Promise<void>): void {
  describe(title, () => {
    it('on SQLite', async () => {
      const store = openStore(':memory:', GATEWAY_MIGRATIONS);
      try {
        await fn({ sql: sqliteSql(store), store });
      } finally {
        store.close();
      }
    });
    it.skipIf(!PG_BIN)('on PostgreSQL', async () => {
      const db = await SharedPostgres.connect(await server!().createDatabase(`gw_both_${++databases}`), silent);
      try {
        await db.migrate('gateway', gatewayPgMigrations());
        await fn({ sql: sharedSql(db), pg: db });
      } finally {
        await db.close();
      }
    }, 30_000);
  });
}

bothBackends('files', async ({ sql, pg }) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-both-files-'));
  try {
    const files = new FileStore(sql);
    const content = Buffer.alloc(1.5 * (1 << 20), 'abcdefgh'); // two chunks in the shared database
    const src = join(dir, 'src');
    writeFileSync(src, content);
    const f = (id: string, owner: string, purpose: string, createdAt: number, expiresAt?: number): FileRecord => ({
      id,
      owner,
      purpose,
      filename: `${id}.jsonl`,
      bytes: content.length,
      sha256: 'ab'.repeat(32),
      createdAt,
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    });
    const [f1, f2, f3, f4] = [f('file-1', 'a', 'batch', 1000), f('file-2', 'a', 'assistants', 2000), f('file-3', 'a', 'batch', 2000, 5000), f('file-4', 'b', 'batch', 3000)];
    for (const x of [f1, f2, f3, f4]) await files.insert(x, src);

    expect(await files.get('file-1')).toEqual(f1);
    expect(await files.get('file-3')).toEqual(f3);
    expect(await files.get('nope')).toBeUndefined();
    const ids = (l: FileRecord[]) => l.map((x) => x.id);
    expect(ids(await files.list({ owner: 'a', limit: 2, order: 'desc' }))).toEqual(['file-3', 'file-2', 'file-1']);
    expect(ids(await files.list({ owner: 'a', limit: 10, order: 'desc', after: f3 }))).toEqual(['file-2', 'file-1']);
    expect(ids(await files.list({ owner: 'a', limit: 10, order: 'asc', after: f1 }))).toEqual(['file-2', 'file-3']);
    expect(ids(await files.list({ owner: 'a', purpose: 'batch', limit: 10, order: 'desc' }))).toEqual(['file-3', 'file-1']);
    expect(ids(await files.expired(6000))).toEqual(['file-3']);
    expect(await files.expired(4000)).toEqual([]);
    expect([...(await files.ids())].sort()).toEqual(['file-1', 'file-2', 'file-3', 'file-4']);

    if (pg) {
      // Several daemons: the bytes are in the database, and come back whole into another daemon's directory.
      const dest = join(dir, 'copy');
      expect(await files.fetchBytes!('file-1', dest)).toBe(true);
      expect(readFileSync(dest).equals(content)).toBe(true);
      expect(await files.fetchBytes!('nope', join(dir, 'none'))).toBe(false);
    } else expect(files.fetchBytes).toBeUndefined();

    expect(await files.delete('file-1')).toBe(true);
    expect(await files.delete('file-1')).toBe(false);
    expect(await files.get('file-1')).toBeUndefined();
    if (pg) expect((await pg.query<{ n: number }>('SELECT count(*) AS n FROM gw_file_chunks WHERE file_id = $1', ['file-1']))[0]!.n).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

bothBackends('batches', async ({ sql, pg }) => {
  const batches = new BatchStore(sql);
  const b = (id: string, owner: string, status: BatchRecord['status'], createdAt: number, extra: Partial<BatchRecord> = {}): BatchRecord => ({
    id,
    owner,
    endpoint: '/v1/chat/completions',
    inputFileId: 'file-in',
    completionWindow: '24h',
    status,
    total: 4,
    createdAt,
    expiresAt: createdAt + 86_400_000,
    ...extra,
  });
  const b1 = b('batch-1', 'a', 'in_progress', 1000, { metadata: { k: 'v' }, inProgressAt: 1100 });
  const [b2, b3, b4] = [b('batch-2', 'a', 'completed', 2000, { completedAt: 2500 }), b('batch-3', 'a', 'validating', 2000), b('batch-4', 'b', 'in_progress', 3000)];
  for (const x of [b1, b2, b3, b4]) await batches.insert(x);

  expect(await batches.get('batch-1')).toEqual(b1);
  await batches.update('batch-1', { status: 'finalizing', finalizingAt: 1500, metadata: undefined });
  const { metadata: _gone, ...rest } = b1;
  expect(await batches.get('batch-1')).toEqual({ ...rest, status: 'finalizing', finalizingAt: 1500 });
  const ids = (l: BatchRecord[]) => l.map((x) => x.id);
  expect(ids(await batches.list('a', 2))).toEqual(['batch-3', 'batch-2', 'batch-1']);
  expect(ids(await batches.list('a', 10, b3))).toEqual(['batch-2', 'batch-1']);
  expect(ids(await batches.unfinished())).toEqual(['batch-1', 'batch-3', 'batch-4']);

  await batches.record('batch-1', { line: 0, ok: true, result: 'r0' });
  await batches.record('batch-1', { line: 1, ok: false, result: 'e1' });
  await batches.record('batch-1', { line: 0, ok: false, result: 'again' }); // a line is recorded once
  await batches.record('batch-1', { line: 3, ok: true, result: 'r3' });
  await batches.record('batch-1', { line: 2, ok: true, result: 'r2' });
  expect([...(await batches.recordedLines('batch-1'))].sort()).toEqual([0, 1, 2, 3]);
  expect(await batches.counts('batch-1')).toEqual({ completed: 3, failed: 1 });
  const all = async (g: AsyncGenerator<string>) => {
    const out: string[] = [];
    for await (const x of g) out.push(x);
    return out;
  };
  expect(await all(batches.results('batch-1', true, 1))).toEqual(['r0', 'r2', 'r3']);
  expect(await all(batches.results('batch-1', false))).toEqual(['e1']);

  await batches.delete('batch-1');
  expect(await batches.get('batch-1')).toBeUndefined();
  expect((await batches.recordedLines('batch-1')).size).toBe(0);

  if (pg) {
    // Several daemons: the lines are kept and handed out, each to one daemon, a stale claim again.
    const shared = (await SharedBatchStore.open(sql, pg)).shared;
    await shared.addLines('batch-3', [0, 1, 2, 3, 4].map((line) => ({ line, raw: `{"n":${line}}` })));
    expect(await shared.claim('batch-3', 'd1', 2, 100, 0)).toEqual([
      { line: 0, raw: '{"n":0}' },
      { line: 1, raw: '{"n":1}' },
    ]);
    expect((await shared.claim('batch-3', 'd2', 2, 100, 0)).map((l) => l.line)).toEqual([2, 3]);
    await batches.record('batch-3', { line: 4, ok: true, result: 'r4' });
    expect(await shared.claim('batch-3', 'd3', 5, 100, 0)).toEqual([]);
    expect((await shared.claim('batch-3', 'd3', 5, 300, 200)).map((l) => l.line)).toEqual([0, 1, 2, 3]);
    expect(await shared.beginFinalizing('batch-3', 400)).toBe(false); // validating
    await batches.update('batch-3', { status: 'in_progress' });
    expect(await shared.beginFinalizing('batch-3', 400)).toBe(true);
    expect(await shared.beginFinalizing('batch-3', 400)).toBe(false);
    expect(await batches.get('batch-3')).toMatchObject({ status: 'finalizing', finalizingAt: 400 });
  }
});

bothBackends('the webhook delivery queue', async ({ sql, pg }) => {
  const queue = new SqlDeliveryQueue(sql);
  const d = (id: string, webhookId: string, nextAttemptAt: number, createdAt: number): DeliveryRecord => ({ id, webhookId, event: 'key.revoked', payload: `{"id":"${id}"}`, status: 'pending', attempts: 0, nextAttemptAt, createdAt });
  const [d1, d2, d3, d4] = [d('msg-1', 'w1', 100, 1), d('msg-2', 'w1', 50, 2), d('msg-3', 'w1', 500, 3), d('msg-4', 'w2', 10, 4)];
  await queue.enqueue([d1, d2, d3]);
  await queue.enqueue([d4]);
  await queue.enqueue([]);

  const ids = (l: DeliveryRecord[]) => l.map((x) => x.id);
  expect(ids(await queue.due(200, 2, 'gw-a'))).toEqual(['msg-4', 'msg-2']);
  // Several daemons: what one took is not handed to another until it records the attempt (or its claim runs out).
  expect(ids(await queue.due(200, 10, 'gw-b'))).toEqual(pg ? ['msg-1'] : ['msg-4', 'msg-2', 'msg-1']);

  await queue.recordAttempt(d2, { attempt: 1, at: 210, status: 500, durationMs: 12 }, { status: 'pending', nextAttemptAt: 400 });
  await queue.recordAttempt(d2, { attempt: 1, at: 220, error: 'boom', durationMs: 5 }, { status: 'pending', nextAttemptAt: 400 }); // the same attempt again: replaced
  await queue.recordAttempt(d1, { attempt: 1, at: 230, status: 503, durationMs: 3 }, { status: 'pending', nextAttemptAt: 300 });
  expect(ids(await queue.due(350, 10, 'gw-c'))).toEqual(pg ? ['msg-1'] : ['msg-4', 'msg-1']);
  await queue.recordAttempt(d2, { attempt: 2, at: 400, status: 200, durationMs: 7 }, { status: 'delivered', deliveredAt: 400 });

  const list = await queue.deliveries('w1', 10);
  expect(list.map((x) => x.id)).toEqual(['msg-3', 'msg-2', 'msg-1']);
  expect(list[1]).toEqual({
    ...d2,
    status: 'delivered',
    attempts: 2,
    lastStatus: 200,
    deliveredAt: 400,
    nextAttemptAt: undefined,
    attemptLog: [
      { attempt: 1, at: 220, error: 'boom', durationMs: 5 },
      { attempt: 2, at: 400, status: 200, durationMs: 7 },
    ],
  } as unknown as DeliveryRecord);
  expect('nextAttemptAt' in list[1]!).toBe(false);
  expect(list[2]).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 503, nextAttemptAt: 300 });
  expect(await queue.deliveries('w1', 1)).toHaveLength(1);

  await queue.dropPending('w1');
  expect(ids(await queue.deliveries('w1', 10))).toEqual(['msg-2']);
  expect(ids(await queue.deliveries('w2', 10))).toEqual(['msg-4']);
});

bothBackends('request log reads', async ({ sql, store, pg }) => {
  const T0 = Date.UTC(2026, 0, 1, 10);
  const DAY = 86_400_000;
  const HOUR = 3_600_000;
  const e = (i: number, ts: number, over: Partial<RequestLogEntry>): RequestLogEntry => ({
    requestId: `r${i}`,
    ts,
    endpoint: 'chat',
    apiKeyId: 'k1',
    provider: 'p1',
    model: 'm1',
    requestedModel: 'p1/m1',
    account: 'acct',
    status: 200,
    stream: false,
    tokensIn: 10,
    tokensOut: 5,
    tokensCached: 0,
    tokensReasoning: 0,
    cost: 0.5,
    latencyMs: 100,
    fallbackAttempts: 0,
    attempts: [{ provider: 'p1', model: 'm1', outcome: 'success', status: 200 }],
    clientAborted: false,
    ...over,
  });
  const entries = [
    e(0, T0, { combo: 'c1', tokensCached: 4, tokensCacheWrite: 2 }),
    e(1, T0 + HOUR, { combo: 'c1', status: 502, error: 'upstream', tokensIn: 0, tokensOut: 0, cost: 0, latencyMs: 300, ttfbMs: 50 }),
    e(2, T0 + DAY, { endpoint: 'embeddings', apiKeyId: 'k2', provider: 'p2', model: 'm2', requestedModel: 'm2', tokensIn: 20, tokensOut: 10, cost: 1, latencyMs: 200 }),
    e(3, T0 + DAY + HOUR, { cache: 'hit', cost: 0, costSaved: 0.5, latencyMs: 5 }),
  ];
  let log: RequestLogStore;
  let shared: PgRequestLog | undefined;
  if (pg) {
    log = shared = new PgRequestLog(pg, silent, () => 7);
    shared.append(entries); // written behind; reads wait for it
  } else {
    new SqliteRequestLog(store!).insert(entries);
    log = new RequestLogStore(sql, () => 7);
  }
  try {
    const page = await log.requestLogs({ limit: 10, offset: 0 });
    expect(page.total).toBe(4);
    expect(page.rows.map((r) => r.requestId)).toEqual(['r3', 'r2', 'r1', 'r0']);
    const { id: _id, modality, ...r2 } = page.rows[1]!;
    expect(modality).toBe('embedding');
    expect(r2).toEqual({ ...entries[2], tokensCacheWrite: 0, costSaved: 0 });
    expect((await log.requestLogs({ limit: 2, offset: 1 })).rows.map((r) => r.requestId)).toEqual(['r2', 'r1']);
    expect((await log.requestLogs({ limit: 10, offset: 0, status: 'error' })).rows.map((r) => r.requestId)).toEqual(['r1']);
    expect((await log.requestLogs({ limit: 10, offset: 0, model: 'm1', apiKeyId: 'k1', since: T0 + 1 })).total).toBe(2);

    expect(await log.history({ since: T0, period: 'day' })).toEqual([
      { period: '2026-01-01', requests: 2, errors: 1, tokensIn: 10, tokensOut: 5, cost: 0.5, avgLatencyMs: 200, cacheHits: 0, costSaved: 0 },
      { period: '2026-01-02', requests: 2, errors: 0, tokensIn: 30, tokensOut: 15, cost: 1, avgLatencyMs: 103, cacheHits: 1, costSaved: 0.5 },
    ]);
    expect((await log.history({ since: T0, period: 'hour', groupBy: 'provider' })).map((h) => [h.period, h.group, h.requests])).toEqual([
      ['2026-01-01T10:00:00Z', 'p1', 1],
      ['2026-01-01T11:00:00Z', 'p1', 1],
      ['2026-01-02T10:00:00Z', 'p2', 1],
      ['2026-01-02T11:00:00Z', 'p1', 1],
    ]);
    expect((await log.history({ since: T0 + DAY, until: T0 + 2 * DAY, period: 'day', groupBy: 'modality' })).map((h) => h.group)).toEqual(['chat', 'embedding']);

    expect(await log.accountUsage('p1', 'acct', T0)).toEqual({ requests: 3, errors: 1, tokensIn: 20, tokensOut: 10, cost: 0.5, lastUsedAt: T0 + DAY + HOUR });
    expect(await log.accountUsage('p1', 'nobody', T0)).toEqual({ requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, cost: 0, lastUsedAt: null });
    expect(await log.comboTargetCounts(T0)).toEqual([{ combo: 'c1', target: 'p1/m1', requests: 2, errors: 1, avgLatency: 200 }]);

    expect(await log.latencyRows({ since: T0, maxRows: 10 })).toEqual([
      { provider: 'p2', model: 'm2', status: 200, latency_ms: 200, ttfb_ms: null },
      { provider: 'p1', model: 'm1', status: 502, latency_ms: 300, ttfb_ms: 50 },
      { provider: 'p1', model: 'm1', status: 200, latency_ms: 100, ttfb_ms: null },
    ]);
    expect(await log.latencyRows({ since: T0, provider: 'p1', model: 'p1/m1', maxRows: 1 })).toHaveLength(1);
    expect(await log.cacheRows({ since: T0, maxRows: 10 })).toEqual([
      { requested_model: 'm2', provider: 'p2', model: 'm2', tokens_cached: 0, tokens_cache_write: 0 },
      { requested_model: 'p1/m1', provider: 'p1', model: 'm1', tokens_cached: 4, tokens_cache_write: 2 },
    ]);
    expect((await log.routingRows(T0, 10)).map((r) => r.latency_ms)).toEqual([200, 300, 100]);
    expect((await log.providerCounts(T0)).sort((a, b) => (a.provider < b.provider ? -1 : 1))).toEqual([
      { provider: 'p1', n: 1 },
      { provider: 'p2', n: 1 },
    ]);

    expect(await log.spend('k1', T0, T0 + 2 * DAY)).toBe(0.5);
    expect(await log.spend('k3', T0, T0 + 2 * DAY)).toBe(0);
    expect(await log.tokens('k1', 'provider', 'p1', T0, T0 + 2 * DAY)).toBe(15);
    expect(await log.tokens('k1', 'model', 'p1/m1', T0, T0 + 2 * DAY)).toBe(15);
    expect(await log.tokens('k2', 'global', undefined, T0, T0 + 2 * DAY)).toBe(30);

    expect(await log.purge(T0 + DAY)).toEqual({ requestLogs: 2, compressionLogs: 7 });
    expect((await log.requestLogs({ limit: 10, offset: 0 })).rows.map((r) => r.requestId)).toEqual(['r3', 'r2']);
  } finally {
    await shared?.close();
  }
});

bothBackends('memory', async ({ sql, pg }) => {
  const memory = pg ? await MemoryStore.shared(sql, pg, 'gw-a', silent) : new MemoryStore(sql);
  const now = 10_000;
  const m = (id: string, content: string, createdAt: number, over: Partial<MemoryRecord> = {}): MemoryRecord => ({
    id,
    key: '',
    content,
    type: 'FACTUAL',
    scope: 'global',
    metadata: {},
    createdAt,
    updatedAt: createdAt,
    ...over,
  });
  const m1 = m('mem-1', 'The deploy password rotates every Monday', 1000, { key: 'ops', metadata: { source: 'wiki' } });
  const m2 = m('mem-2', 'User prefers concise answers in French', 2000, { type: 'SEMANTIC', scope: 'apiKey', apiKeyId: 'k1' });
  const m3 = m('mem-3', 'Working on the billing migration', 3000, { type: 'EPISODIC', scope: 'session', sessionId: 's1' });
  const m4 = m('mem-4', 'An old note about monday', 4000, { expiresAt: now - 1 });

  expect(memory.any()).toBe(false);
  for (const x of [m1, m2, m3, m4]) await memory.save(x);
  expect(memory.any()).toBe(true);
  expect(await memory.get('mem-1')).toEqual(m1);
  await memory.save({ ...m1, content: 'The deploy password rotates every Monday morning', updatedAt: 1500 });
  expect(await memory.get('mem-1')).toEqual({ ...m1, content: 'The deploy password rotates every Monday morning', updatedAt: 1500 });

  const ids = (l: MemoryRecord[]) => l.map((x) => x.id);
  const all = await memory.list({}, 0, 10);
  expect([all.total, ids(all.rows)]).toEqual([4, ['mem-4', 'mem-3', 'mem-2', 'mem-1']]);
  expect(ids((await memory.list({}, 1, 2)).rows)).toEqual(['mem-3', 'mem-2']);
  expect((await memory.list({ now }, 0, 10)).total).toBe(3);
  expect((await memory.list({ apiKeyId: 'k1', type: 'SEMANTIC' }, 0, 10)).total).toBe(1);
  const monday = await memory.list({ q: 'monday' }, 0, 10);
  expect([monday.total, ids(monday.rows).sort()]).toEqual([2, ['mem-1', 'mem-4']]);
  expect((await memory.list({ q: 'Monday', now }, 0, 10)).rows.map((x) => x.id)).toEqual(['mem-1']);
  expect(await memory.list({ q: 'the and of' }, 0, 10)).toEqual({ rows: [], total: 0 });

  const found = await memory.search('deploy password', {}, 10);
  expect(found.map((x) => x.memory.id)).toEqual(['mem-1']);
  expect(typeof found[0]!.score).toBe('number');
  expect(found.map((x) => x.memory)).toEqual([await memory.get('mem-1')]);
  expect((await memory.search('billing migration monday', {}, 10)).map((x) => x.memory.id).sort()).toEqual(['mem-1', 'mem-3', 'mem-4']);
  expect(await memory.search('"; DROP TABLE memories; --', {}, 10)).toEqual([]);

  expect(ids(await memory.forCaller({ apiKeyId: 'k1', sessionId: 's1' }, 'monday password', now, 10))).toEqual(['mem-3', 'mem-1']);
  expect(ids(await memory.forCaller({ apiKeyId: 'k2' }, 'french answers', now, 10))).toEqual([]);
  expect(ids(await memory.forCaller({ apiKeyId: 'k1' }, 'french answers', now, 10))).toEqual(['mem-2']);
  expect(ids(await memory.forCaller({ sessionId: 's1' }, undefined, now, 10))).toEqual(['mem-3']);

  const bytes = [m1, m2, m3, m4].reduce((n, x) => n + x.content.length + x.key.length, 0) + ' morning'.length;
  expect(await memory.stats(now)).toEqual({
    total: 4,
    expired: 1,
    byType: { FACTUAL: 2, EPISODIC: 1, SEMANTIC: 1, PROCEDURAL: 0 },
    byScope: { global: 2, apiKey: 1, session: 1 },
    apiKeys: 1,
    sessions: 1,
    bytes,
  });
  expect(await memory.integrity()).toBeUndefined();

  expect(await memory.deleteExpired(now)).toBe(1);
  expect(await memory.clear({ apiKeyId: 'k1' })).toBe(1);
  expect(await memory.delete('mem-3')).toBe(true);
  expect(await memory.delete('mem-3')).toBe(false);
  expect(memory.any()).toBe(true);
  expect(await memory.clear({})).toBe(1);
  // SQLite looks at once; the shared database says true until its lookup answers.
  for (let i = 0; memory.any() && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
  expect(memory.any()).toBe(false);
});
