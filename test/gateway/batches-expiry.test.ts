/** The 24 h window: a batch still running when it ends is expired, its unrun lines in the error file; files expire too. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { ManualClock } from '../../src/http/clock.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
let clock: ManualClock;
let client: OpenAI;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { latencyMs: 40 } });
  clock = new ManualClock(Date.parse('2030-01-02T12:00:00Z'));
  gw = await startGateway({ clock, config: { batch_concurrency: 2 }, yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n` });
  client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('expiry', () => {
  it('a batch past its window is expired: lines not run go to the error file as batch_expired', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => JSON.stringify({ custom_id: `e${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'oa/m1', messages: [{ role: 'user', content: 'x' }] } }));
    const input = await client.files.create({ file: await toFile(Buffer.from(rows.join('\n')), 'e.jsonl'), purpose: 'batch' });
    const b = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(b.expires_at! - b.created_at).toBe(24 * 3600);
    for (let end = Date.now() + 5000; Date.now() < end && ((await client.batches.retrieve(b.id)).request_counts?.completed ?? 0) < 2; ) await new Promise((r) => setTimeout(r, 10));
    clock.advance(24 * 3600 * 1000);
    let done = await client.batches.retrieve(b.id);
    for (let end = Date.now() + 10_000; done.status !== 'expired' && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 20));
      done = await client.batches.retrieve(b.id);
    }
    expect(done.status).toBe('expired');
    expect(typeof done.expired_at).toBe('number');
    const { completed, failed, total } = done.request_counts!;
    expect(total).toBe(40);
    expect(completed).toBeGreaterThanOrEqual(2);
    expect(completed + failed).toBe(40);
    const errors = (await (await client.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(errors).toHaveLength(failed);
    expect(errors[0]).toMatchObject({ response: null, error: { code: 'batch_expired' } });
  });

  it('a file with expires_after is gone once it expires', async () => {
    const f = await client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect((await client.files.retrieve(f.id)).expires_at).toBe(f.created_at + 3600);
    clock.advance(3600 * 1000);
    await expect(client.files.retrieve(f.id)).rejects.toMatchObject({ status: 404 });
  });
});
