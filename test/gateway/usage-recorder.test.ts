import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { UsageRecorder } from '../../src/gateway/request-log/recorder.js';
import type { GatewayStore } from '../../src/gateway/store.js';
import type { RequestLogEntry } from '../../src/gateway/request-log/store.js';

const entry = (requestId: string, model = 'ok-model'): RequestLogEntry => ({ requestId, ts: 1, endpoint: '/v1/chat/completions', model }) as RequestLogEntry;

/** A store whose insert fails for any batch holding a `bad` row, or for everything when the disk is "broken". */
function fakeStore(opts: { broken?: boolean } = {}) {
  const written: string[] = [];
  const db = {
    insertRequestLogs(entries: readonly RequestLogEntry[]) {
      if (opts.broken || entries.some((e) => e.model === 'bad')) throw new Error('constraint failed');
      written.push(...entries.map((e) => e.requestId));
    },
    touchKeys() {},
  } as unknown as GatewayStore;
  return { db, written };
}

describe('request log recorder', () => {
  it('one bad row does not cost the batch its good rows; the bad one is dropped', () => {
    const { db, written } = fakeStore();
    const rec = new UsageRecorder(db, pino({ level: 'silent' }), new Map(), 60_000);
    for (let i = 0; i < 22; i++) rec.record(entry(`r${i}`, i === 5 || i === 9 ? 'bad' : 'ok-model'));
    rec.flush();
    expect(written).toHaveLength(20);
    expect(written).not.toContain('r5');
    expect(rec.pending).toBe(0);
    rec.stop();
  });

  it('when every row fails (the disk, not a row), the batch is kept for the next flush', () => {
    const store = { broken: true };
    const { db, written } = fakeStore(store);
    const rec = new UsageRecorder(db, pino({ level: 'silent' }), new Map(), 60_000);
    for (let i = 0; i < 3; i++) rec.record(entry(`r${i}`));
    rec.flush();
    expect(rec.pending).toBe(3);
    store.broken = false;
    rec.flush();
    expect(written).toEqual(['r0', 'r1', 'r2']);
    rec.stop();
  });
});
