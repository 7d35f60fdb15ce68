/**
 * /v1/files and /v1/batches with the official OpenAI SDK: upload, list, retrieve, content, delete,
 * per-key scoping; a batch polled to completion through the gateway's pipeline with its output and
 * error files; validation errors with their line numbers; cancel; delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY = 'sk-gw-batch-aaaaaaaaaa';
const OTHER = 'sk-gw-batch-bbbbbbbbbb';
let mock: MockUpstream;
let gw: GatewayHarness;
let client: OpenAI;
let other: OpenAI;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { usage: { input: 10, output: 5 } } });
  gw = await startGateway({
    yaml: `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k1, models: [m1, {id: e1, type: embedding}]}
  - {id: gone, kind: openai, base_url: "${mock.origin}/nowhere/v1", api_key: k2, models: [m9]}
keys:
  - {name: app, key: "${KEY}", models: ["*"]}
  - {name: other, key: "${OTHER}", models: ["*"]}
pricing:
  oa/m1: {input: 1, output: 2}
`,
  });
  client = new OpenAI({ apiKey: KEY, baseURL: `${gw.tcpUrl}/v1` });
  other = new OpenAI({ apiKey: OTHER, baseURL: `${gw.tcpUrl}/v1` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const chatLine = (id: string, model = 'oa/m1') => ({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `hello ${id}` }] } });

async function waitFor(id: string, done: (s: string) => boolean, c = client) {
  const end = Date.now() + 15_000;
  for (;;) {
    const b = await c.batches.retrieve(id);
    if (done(b.status) || Date.now() > end) return b;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('files', () => {
  it('uploads, lists, retrieves, streams and deletes a file; another key sees none of it', async () => {
    const text = jsonl([chatLine('a')]);
    const f = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
    expect(f).toMatchObject({ object: 'file', bytes: Buffer.byteLength(text), filename: 'in.jsonl', purpose: 'batch', status: 'processed' });
    expect(f.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect((await client.files.list()).data.map((x) => x.id)).toContain(f.id);
    expect((await client.files.list({ purpose: 'vision' })).data).toEqual([]);
    expect((await client.files.retrieve(f.id)).bytes).toBe(f.bytes);
    expect(await (await client.files.content(f.id)).text()).toBe(text);
    await expect(other.files.retrieve(f.id)).rejects.toMatchObject({ status: 404 });
    expect((await other.files.list()).data).toEqual([]);
    expect(await client.files.delete(f.id)).toMatchObject({ id: f.id, deleted: true });
    await expect(client.files.retrieve(f.id)).rejects.toMatchObject({ status: 404 });
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'files'))).not.toContain(f.id);
  });

  it('refuses a missing purpose, an unknown one, a bad expiry and a path-like id', async () => {
    const post = async (form: FormData) => {
      const res = await fetch(`${gw.tcpUrl}/v1/files`, { method: 'POST', body: form, headers: { authorization: `Bearer ${KEY}` } });
      return { status: res.status, json: (await res.json()) as { error: { message: string } } };
    };
    const form = (fields: Record<string, string>) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      f.append('file', new Blob(['x']), 'x.txt');
      return f;
    };
    expect((await post(form({}))).json.error.message).toBe('purpose is required (a form field)');
    expect((await post(form({ purpose: 'nope' }))).json.error.message).toMatch(/purpose must be one of/);
    expect((await post(form({ purpose: 'user_data', 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '60' }))).json.error.message).toMatch(/from 3600 to 2592000/);
    const ok = await post(form({ purpose: 'user_data', 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '3600' }));
    expect(ok.status).toBe(200);
    expect((ok.json as unknown as { expires_at: number; created_at: number }).expires_at - (ok.json as unknown as { created_at: number }).created_at).toBe(3600);
    const traversal = await fetch(`${gw.tcpUrl}/v1/files/..%2F..%2Fdatabase%2Fgateway.db/content`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(traversal.status).toBe(404);
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'tmp'))).toEqual([]);
  });
});

describe('batches', () => {
  it('runs every line through the gateway, writes the output and error files, counts them, and is listed, cancelled (refused) and deleted', async () => {
    const input = await client.files.create({ file: await toFile(Buffer.from(jsonl([chatLine('one'), chatLine('two'), chatLine('broken', 'gone/m9')])), 'batch.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: input.id, completion_window: '24h', metadata: { run: 'nightly' } });
    expect(['validating', 'in_progress', 'finalizing', 'completed']).toContain(created.status);
    const done = await waitFor(created.id, (s) => s === 'completed');
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    for (const t of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) expect(typeof done[t]).toBe('number');
    const out = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(out.map((l) => l.custom_id)).toEqual(['one', 'two']);
    expect(out[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion', model: 'oa/m1' } }, error: null });
    expect(out[0].id).toMatch(/^batch_req_/);
    const errs = (await (await client.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(errs).toHaveLength(1);
    expect(errs[0].custom_id).toBe('broken');
    expect(errs[0].response.status_code).toBeGreaterThanOrEqual(400);
    expect(errs[0].response.body.error.message).toBeTruthy();
    // The output files belong to the same key; the lines were logged under it, with their cost.
    expect((await client.files.retrieve(done.output_file_id!)).purpose).toBe('batch_output');
    const logs = (await gw.req('GET', '/api/usage/request-logs?apiKeyId=file:app&model=oa/m1')).json.items as { cost: number }[];
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expect(logs[0]!.cost).toBeGreaterThan(0);
    expect((await client.batches.list()).data.map((b) => b.id)).toContain(created.id);
    await expect(other.batches.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.batches.cancel(created.id)).rejects.toMatchObject({ status: 400 });
    const del = await fetch(`${gw.tcpUrl}/v1/batches/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${KEY}` } });
    expect(await del.json()).toEqual({ id: created.id, object: 'batch', deleted: true });
    await expect(client.batches.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('fails validation naming the lines: bad JSON, duplicate custom_id, wrong url, no body', async () => {
    const text = [JSON.stringify(chatLine('a')), '{not json', JSON.stringify(chatLine('a')), JSON.stringify({ ...chatLine('c'), url: '/v1/embeddings' }), JSON.stringify({ custom_id: 'd', method: 'POST', url: '/v1/chat/completions' })].join('\n');
    const input = await client.files.create({ file: await toFile(Buffer.from(text), 'bad.jsonl'), purpose: 'batch' });
    const b = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await waitFor(b.id, (s) => s === 'failed');
    expect(failed.status).toBe('failed');
    expect(failed.errors!.data!.map((e) => [e.line, e.code])).toEqual([
      [2, 'invalid_json_line'],
      [3, 'duplicate_custom_id'],
      [4, 'mismatched_endpoint'],
      [5, 'invalid_request'],
    ]);
    expect(typeof failed.failed_at).toBe('number');
  });

  it('refuses bad create bodies in OpenAI error shape', async () => {
    const input = await client.files.create({ file: await toFile(Buffer.from(jsonl([chatLine('a')])), 'x.jsonl'), purpose: 'user_data' });
    for (const [body, msg] of [
      [{ endpoint: '/v1/chat/completions', completion_window: '24h' }, /input_file_id is required/],
      [{ input_file_id: 'file-000000000000000000000000', endpoint: '/v1/chat/completions', completion_window: '24h' }, /no file/],
      [{ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, /purpose user_data/],
    ] as const) {
      const r = await gw.req('POST', '/v1/batches', body, { authorization: `Bearer ${KEY}` }, { tcp: true });
      expect(r.status).toBe(400);
      expect(r.json.error.type).toBe('invalid_request_error');
      expect(r.json.error.message).toMatch(msg);
    }
    const batchFile = await client.files.create({ file: await toFile(Buffer.from(jsonl([chatLine('a')])), 'y.jsonl'), purpose: 'batch' });
    const r = await gw.req('POST', '/v1/batches', { input_file_id: batchFile.id, endpoint: '/v1/images/generations', completion_window: '24h' }, { authorization: `Bearer ${KEY}` }, { tcp: true });
    expect(r.json.error.message).toMatch(/endpoint must be one of/);
    const w = await gw.req('POST', '/v1/batches', { input_file_id: batchFile.id, endpoint: '/v1/chat/completions', completion_window: '1h' }, { authorization: `Bearer ${KEY}` }, { tcp: true });
    expect(w.json.error.message).toBe('completion_window must be 24h');
  });

  it('cancels a running batch: in-flight lines finish, the rest never run, the partial output is kept', async () => {
    mock.defaults.latencyMs = 100;
    try {
      const rows = Array.from({ length: 200 }, (_, i) => chatLine(`c${i}`));
      const input = await client.files.create({ file: await toFile(Buffer.from(jsonl(rows)), 'many.jsonl'), purpose: 'batch' });
      const before = mock.requests.length;
      const b = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await waitFor(b.id, (s) => s === 'in_progress');
      await new Promise((r) => setTimeout(r, 150));
      const cancelling = await client.batches.cancel(b.id);
      expect(['cancelling', 'cancelled']).toContain(cancelling.status);
      const done = await waitFor(b.id, (s) => s === 'cancelled');
      expect(done.status).toBe('cancelled');
      expect(done.request_counts!.completed).toBeGreaterThan(0);
      expect(done.request_counts!.completed).toBeLessThan(200);
      expect(mock.requests.length - before).toBe(done.request_counts!.completed);
      const out = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n');
      expect(out).toHaveLength(done.request_counts!.completed);
    } finally {
      mock.defaults.latencyMs = 0;
    }
  });
});
