/** BatchService on its own: the events it emits (for webhooks), and a line whose key was revoked. */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { BatchService, type BatchEvent } from '../../src/gateway/batches/service.js';
import { FileService } from '../../src/gateway/files/service.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { ManualClock } from '../../src/http/clock.js';
import { openStore } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ctl-batch-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('BatchService', () => {
  it('emits batch.completed and batch.failed; a line whose key is gone fails with 401 without a call', async () => {
    const store = openStore(join(dir, 'gateway.db'), GATEWAY_MIGRATIONS);
    const clock = new ManualClock(Date.parse('2030-01-02T12:00:00Z'));
    const log = pino({ level: 'silent' });
    const files = FileService.local(store, join(dir, 'uploads'), clock, log);
    let revoked = false;
    const batches = BatchService.local(store, files, clock, log, () => (revoked ? 'API key is disabled, revoked or expired' : { trusted: false }), 2);
    const calls: string[] = [];
    batches.attach(async (_p, url, body) => {
      calls.push(String((body.messages as { content: string }[])[0]!.content));
      return { status: 200, headers: {}, body: JSON.stringify({ ok: url }) };
    });
    const events: [BatchEvent, string][] = [];
    batches.onEvent((e, b) => events.push([e, b.id]));
    const file = async (name: string, lines: string[]) => {
      const p = join(dir, name);
      writeFileSync(p, lines.join('\n'));
      return await files.adopt(p, { owner: '', purpose: 'batch', filename: name, bytes: 1, sha256: 'x' });
    };
    const line = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { messages: [{ content: id }] } });
    const waitEnd = async (id: string) => {
      for (let i = 0; i < 200 && !['completed', 'failed', 'expired', 'cancelled'].includes((await batches.store.get(id))!.status); i++) await new Promise((r) => setTimeout(r, 10));
      return (await batches.store.get(id))!;
    };
    const ok = await batches.create({ owner: '', endpoint: '/v1/chat/completions', inputFileId: (await file('a.jsonl', [line('a'), line('b')])).id, completionWindow: '24h' });
    expect((await waitEnd(ok.id)).status).toBe('completed');
    const bad = await batches.create({ owner: '', endpoint: '/v1/chat/completions', inputFileId: (await file('b.jsonl', ['nope'])).id, completionWindow: '24h' });
    expect((await waitEnd(bad.id)).status).toBe('failed');
    expect(events).toEqual([
      ['batch.completed', ok.id],
      ['batch.failed', bad.id],
    ]);
    revoked = true;
    const gone = await batches.create({ owner: 'k1', endpoint: '/v1/chat/completions', inputFileId: (await file('c.jsonl', [line('c')])).id, completionWindow: '24h' });
    const done = await waitEnd(gone.id);
    expect(done.status).toBe('completed');
    expect(await batches.store.counts(gone.id)).toEqual({ completed: 0, failed: 1 });
    expect(calls).toEqual(['a', 'b']);
    const all: string[] = [];
    for await (const r of batches.store.results(gone.id, false)) all.push(r);
    const result = JSON.parse(all[0]!);
    expect(result.response).toMatchObject({ status_code: 401, body: { error: { message: 'API key is disabled, revoked or expired' } } });
    await batches.stop();
    store.close();
  });
});
