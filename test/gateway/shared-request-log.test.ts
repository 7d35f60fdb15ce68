/**
 * The shared request log (gateway/request-log/shared-log.ts) on a private PostgreSQL that stops and
 * starts again in the middle of the load: every row queued meanwhile is written once the server is
 * back (the log used to stop for good: its retry kept a settled flush), and a queue that overflows
 * drops its oldest rows, counted and logged, never silently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PgRequestLog } from '../../src/gateway/request-log/shared-log.js';
import { REQUEST_LOG_MIGRATION, type RequestLogEntry } from '../../src/gateway/request-log/store.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';

const entry = (i: number): RequestLogEntry => ({
  requestId: `req-${i}`,
  ts: 1_800_000_000_000 + i,
  endpoint: 'chat',
  requestedModel: 'oa/m1',
  status: 200,
  stream: false,
  tokensIn: 1,
  tokensOut: 1,
  tokensCached: 0,
  tokensReasoning: 0,
  cost: 0,
  latencyMs: 1,
  fallbackAttempts: 0,
  attempts: [],
  clientAborted: false,
});

describe.skipIf(!PG_BIN)('the shared request log through a PostgreSQL outage', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let server: PostgresServer;
  let db: SharedPostgres;
  const logged: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });

  beforeAll(async () => {
    server = await PostgresServer.start();
    const url = await server.createDatabase('reqlog');
    // The helper's server acknowledges commits before WAL is written (synchronous_commit=off) and
    // stops like a crash: here a commit must be a commit, or rows it acknowledged could vanish.
    const admin = await SharedPostgres.connect(server.url(), pino({ level: 'silent' }));
    await admin.query('ALTER DATABASE reqlog SET synchronous_commit = on');
    await admin.close();
    db = await SharedPostgres.connect(url, pino({ level: 'silent' }));
    for (const stmt of REQUEST_LOG_MIGRATION.split(';').map((x) => x.trim()).filter(Boolean)) await db.query(stmt);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await server?.destroy();
  });

  const count = async (prefix: string) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM gw_request_log WHERE request_id LIKE $1', [`${prefix}%`]))[0]!.n);

  it('rows appended under load while the server is stopped are all written once it is back', async () => {
    const reqlog = new PgRequestLog(db, log, () => 0);
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ ...entry(from + i), requestId: `load-${from + i}` }));
    let next = 0;
    const burst = () => {
      reqlog.append(rows(next, 20));
      next += 20;
    };
    // Load before, during and after the outage: 20 rows every 10 ms.
    const loader = setInterval(burst, 10);
    try {
      await new Promise((r) => setTimeout(r, 300));
      await server.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await server.start();
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      clearInterval(loader);
    }
    const total = next;
    let written = 0;
    for (let i = 0; i < 100 && written < total; i++) {
      await new Promise((r) => setTimeout(r, 100));
      written = await count('load-').catch(() => 0);
    }
    console.log(`request log: ${written} of ${total} rows written after the outage`);
    expect(written).toBe(total);
    // And it keeps writing afterwards, once every retry of the outage is over.
    await new Promise((r) => setTimeout(r, 1500));
    reqlog.append(rows(next, 5));
    for (let i = 0; i < 50 && (await count('load-')) < total + 5; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await count('load-')).toBe(total + 5);
    expect(reqlog.queued).toBe(0);
    expect(reqlog.dropped).toBe(0);
    await reqlog.close();
  }, 60_000);

  it('a full queue drops its oldest rows, counted and logged', async () => {
    const reqlog = new PgRequestLog(db, log, () => 0, 50);
    await server.stop();
    try {
      reqlog.append(Array.from({ length: 80 }, (_, i) => ({ ...entry(i), requestId: `full-${i}` })));
      expect(reqlog.dropped).toBe(30);
      expect(reqlog.queued).toBe(50);
      const line = logged.find((l) => typeof l.msg === 'string' && /queue is full/.test(l.msg as string));
      expect(line).toMatchObject({ dropped: 30, firstRequestId: 'full-0', lastRequestId: 'full-29' });
    } finally {
      await server.start();
    }
    for (let i = 0; i < 100 && (await count('full-').catch(() => 0)) < 50; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await count('full-')).toBe(50);
    expect(Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM gw_request_log WHERE request_id = 'full-29'"))[0]!.n)).toBe(0);
    await reqlog.close();
  }, 60_000);
});
