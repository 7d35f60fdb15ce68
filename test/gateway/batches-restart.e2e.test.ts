/**
 * A batch interrupted by kill -9 resumes when the daemon starts again: every line ends up in the
 * output exactly once, and no line whose result was recorded before the kill is sent upstream again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const LINES = 120;
let mock: MockUpstream;
let d: TestDaemon;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { latencyMs: 60 } });
  d = await startDaemon({
    ctlYaml: { gateway: { batch_concurrency: 8 } },
    files: { 'gateway.yaml': `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n` },
  });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await mock?.close();
});

const customIdOf = (body: unknown) => /hello (r\d+)/.exec(JSON.stringify(body))?.[1];

describe('batch across kill -9', () => {
  it('resumes at start and never re-runs a recorded line', async () => {
    const client = async () => new OpenAI({ apiKey: 'none', baseURL: `${await d.baseUrl('gateway')}/v1` });
    const rows = Array.from({ length: LINES }, (_, i) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'oa/m1', messages: [{ role: 'user', content: `hello r${i}` }] } }));
    let c = await client();
    const input = await c.files.create({ file: await toFile(Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')), 'in.jsonl'), purpose: 'batch' });
    const b = await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    for (let end = Date.now() + 15_000; Date.now() < end; ) {
      if (((await c.batches.retrieve(b.id)).request_counts?.completed ?? 0) >= 30) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await d.kill9();
    const db = new Database(join(d.dir, 'database', 'gateway.db'), { readonly: true });
    const recorded = (db.prepare('SELECT result FROM batch_results WHERE batch_id = ?').all(b.id) as { result: string }[]).map((r) => JSON.parse(r.result).custom_id as string);
    db.close();
    expect(recorded.length).toBeGreaterThanOrEqual(30);
    expect(recorded.length).toBeLessThan(LINES);

    await d.start();
    c = await client();
    let done = await c.batches.retrieve(b.id);
    for (let end = Date.now() + 20_000; done.status !== 'completed' && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 50));
      done = await c.batches.retrieve(b.id);
    }
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    const out = (await (await c.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l).custom_id as string);
    expect(out).toEqual(rows.map((r) => r.custom_id));
    const sent = new Map<string, number>();
    for (const r of mock.requests) {
      const id = customIdOf(r.body);
      if (id) sent.set(id, (sent.get(id) ?? 0) + 1);
    }
    for (const id of recorded) expect(sent.get(id), id).toBe(1);
    // Only lines in flight at the kill (at most the concurrency) were sent twice.
    expect([...sent.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(8);
  }, 60_000);
});
