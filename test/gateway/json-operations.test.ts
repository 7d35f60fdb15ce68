/**
 * /v1/moderations and /v1/rerank through the gateway: the official OpenAI SDK's moderations.create,
 * rerank over HTTP, fallback past a failing target, model types and provider kinds that cannot
 * serve, bad bodies in OpenAI's error shape, the request log and cost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { createReadStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { speechBytes, startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({
    yaml: `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k1, models: [{id: omni-moderation-latest, type: moderation}, {id: rr, type: rerank}, {id: chatty, type: chat}, plain, {id: gpt-image-1, type: image}, {id: tts-1, type: speech}, {id: whisper-1, type: transcription}, {id: veo, type: video}, {id: lyria, type: music}]}
  - {id: ob, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k2, models: [{id: rr, type: rerank}, {id: tts-1, type: speech}]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k3, models: [{id: rr2, type: rerank}]}
  - {id: gm, kind: gemini, base_url: "${mock.baseUrl('gemini')}", api_key: k4, models: [{id: imagen-4, type: image}, {id: gemini-tts, type: speech}, {id: gmod, type: moderation}]}
combos:
  - {name: ranker, strategy: priority, targets: [oa/rr, ob/rr]}
  - {name: speaker, strategy: priority, targets: [oa/tts-1, ob/tts-1]}
  - {name: wav-speaker, strategy: priority, targets: [gm/gemini-tts, oa/tts-1]}
pricing:
  oa/rr: {input: 2, output: 0, per_search_unit: 0.002}
  oa/gpt-image-1: {per_image: {"1024x1024/high": 0.17, "1024x1024": 0.04, default: 0.01}}
  oa/tts-1: {per_character: 0.000015}
  oa/whisper-1: {per_second: 0.0001}
  oa/veo: {per_second: 0.5}
  oa/lyria: {per_request: 0.06}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('moderations', () => {
  it('the OpenAI SDK moderates through the gateway (default model, cost 0)', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.moderations.create({ input: ['hello there', 'I will kill the process'] });
    expect(r.results.map((x) => x.flagged)).toEqual([false, true]);
    expect(r.model).toBe('oa/omni-moderation-latest');
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toMatch(/\/openai\/v1\/moderations$/);
    expect(sent.body).toMatchObject({ model: 'omni-moderation-latest', input: ['hello there', 'I will kill the process'] });
    const raw = await gw.req('POST', '/v1/moderations', { model: 'oa/omni-moderation-latest', input: 'fine' });
    expect(Number(raw.headers['x-gateway-response-cost'])).toBe(0);
    expect(raw.headers['x-gateway-decision']).toMatch(/provider=oa/);
  });

  it('bad input is a 400 in OpenAI error shape; a model declared as chat cannot moderate', async () => {
    const bad = await gw.req('POST', '/v1/moderations', { model: 'oa/omni-moderation-latest', input: 42 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/body\/input must be/) });
    const chat = await gw.req('POST', '/v1/moderations', { model: 'oa/chatty', input: 'x' });
    expect(chat.status).toBe(400);
    expect(chat.json.error.message).toBe('model oa/chatty cannot serve /v1/moderations: it is declared as a chat model');
    // A model listed without a type is tried (the upstream decides).
    expect((await gw.req('POST', '/v1/moderations', { model: 'oa/plain', input: 'x' })).status).toBe(200);
  });
});

describe('images', () => {
  it('the OpenAI SDK generates images through the gateway; GET lists the image models; the scoped route works', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.images.generate({ model: 'oa/gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1024x1024' });
    expect(r.data!.map((d) => d.url)).toEqual(['https://img.mock/0.png', 'https://img.mock/1.png']);
    expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1024x1024' });
    const b64 = await gw.req('POST', '/v1/providers/oa/images/generations', { model: 'gpt-image-1', prompt: 'p', response_format: 'b64_json' });
    expect(Buffer.from(b64.json.data[0].b64_json, 'base64').toString()).toBe('png-0-p');
    const list = await gw.req('GET', '/v1/images/generations');
    expect(list.json.data.map((m: { id: string }) => m.id)).toEqual(['gm/imagen-4', 'oa/gpt-image-1']);
    const bad = await gw.req('POST', '/v1/images/generations', { model: 'oa/gpt-image-1', prompt: 'p', size: 'huge' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/body\/size must be WIDTHxHEIGHT/);
  });
});

describe('image edits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-img-'));
  const png = join(dir, 'harbour.png');
  const mask = join(dir, 'mask.png');
  writeFileSync(png, 'PNG' + 'p'.repeat(300_000));
  writeFileSync(mask, 'PNGmask');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the OpenAI SDK edits an image with a mask, and several images; cost per image; nothing left on disk', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const raw = await client.images.edit({ model: 'oa/gpt-image-1', image: createReadStream(png), mask: createReadStream(mask), prompt: 'add a boat', n: 2, size: '1024x1024' }).withResponse();
    expect(raw.data.data!.map((d) => d.revised_prompt)).toEqual(['add a boat (1 image, masked)', 'add a boat (1 image, masked)']);
    expect(Number(raw.response.headers.get('x-gateway-response-cost'))).toBeCloseTo(0.08, 10);
    expect(mock.lastForm!.fields).toMatchObject({ model: 'gpt-image-1', prompt: 'add a boat', n: '2', size: '1024x1024' });
    expect(mock.lastForm!.files!.map((f) => [f.field, f.name, f.size])).toEqual([
      ['image', 'harbour.png', 300_003],
      ['mask', 'mask.png', 7],
    ]);
    const many = await client.images.edit({ model: 'oa/gpt-image-1', image: [createReadStream(png), createReadStream(png)], prompt: 'merge' });
    expect(many.data![0]!.revised_prompt).toBe('merge (2 images)');
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'tmp'))).toEqual([]);
  });

  it('bad forms are 400s in OpenAI error shape; a speech model cannot edit images', async () => {
    const post = async (parts: [string, string | Blob, string?][]) => {
      const form = new FormData();
      for (const [k, v, name] of parts) (v instanceof Blob ? form.append(k, v, name) : form.append(k, v));
      const res = await fetch(`${gw.trustedUrl}/v1/images/edits`, { method: 'POST', body: form });
      return { status: res.status, json: (await res.json()) as { error: { message: string; type: string } } };
    };
    const img = new Blob(['PNGx']);
    for (const [parts, msg] of [
      [[['model', 'oa/gpt-image-1'], ['prompt', 'p']], /image is required/],
      [[['model', 'oa/gpt-image-1'], ['image', img, 'a.gif'], ['prompt', 'p']], /unsupported image format "a.gif"/],
      [[['model', 'oa/gpt-image-1'], ['image', img, 'a.png']], /prompt is required/],
      [[['model', 'oa/gpt-image-1'], ['image', img, 'a.png'], ['mask', img, 'm.jpg'], ['prompt', 'p']], /mask must be a PNG/],
      [[['model', 'oa/gpt-image-1'], ['image', img, 'a.png'], ['prompt', 'p'], ['n', '11']], /n must be an integer from 1 to 10/],
      [[['model', 'oa/gpt-image-1'], ['file', img, 'a.png'], ['prompt', 'p']], /unexpected file field "file"/],
      [[['model', 'oa/tts-1'], ['image', img, 'a.png'], ['prompt', 'p']], /model oa\/tts-1 cannot serve \/v1\/images\/edits: it is declared as a speech model/],
    ] as const) {
      const r = await post(parts as unknown as [string, string | Blob, string?][]);
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect(r.json.error.type).toBe('invalid_request_error');
      expect(r.json.error.message).toMatch(msg);
    }
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'tmp'))).toEqual([]);
    // The provider-scoped route.
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'p');
    form.append('image', img, 'a.webp');
    expect((await fetch(`${gw.trustedUrl}/v1/providers/oa/images/edits`, { method: 'POST', body: form })).status).toBe(200);
  });
});

describe('gemini', () => {
  it('generates images through Imagen predict: n as sampleCount, size as the nearest aspect ratio, answered as b64_json', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.images.generate({ model: 'gm/imagen-4', prompt: 'a harbour', n: 2, size: '1792x1024' });
    expect(r.data!.map((d) => Buffer.from(d.b64_json!, 'base64').toString())).toEqual(['imagen-0-a harbour-16:9', 'imagen-1-a harbour-16:9']);
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toMatch(/\/gemini\/v1beta\/models\/imagen-4:predict$/);
    expect(sent.headers['x-goog-api-key']).toBe('k4');
    expect(sent.body).toEqual({ instances: [{ prompt: 'a harbour' }], parameters: { sampleCount: 2, aspectRatio: '16:9' } });
  });

  it('speaks through generateContent with audio out: a WAV around the PCM, or the PCM itself; mp3 goes to the next target', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.audio.speech.create({ model: 'gm/gemini-tts', input: 'good morning', voice: 'Kore', response_format: 'wav' });
    expect(r.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await r.arrayBuffer());
    const pcm = Buffer.from('Kore|good morning'.padEnd(64, '.'));
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(24000);
    expect(wav.readUInt32LE(40)).toBe(pcm.length);
    expect(wav.subarray(44).equals(pcm)).toBe(true);
    const body = mock.requests.at(-1)!.body as Record<string, any>;
    expect(body.generationConfig).toEqual({ responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } });
    const raw = await gw.req('POST', '/v1/audio/speech', { model: 'gm/gemini-tts', input: 'good morning', voice: 'Kore', response_format: 'pcm' });
    expect(raw.headers['content-type']).toBe('audio/pcm');
    expect(Buffer.from(raw.text, 'latin1').length).toBe(pcm.length);
    const mp3 = await gw.req('POST', '/v1/audio/speech', { model: 'gm/gemini-tts', input: 'x', voice: 'Kore' });
    expect(mp3.status).toBe(400);
    expect(mp3.json.error.message).toBe('model gm/gemini-tts cannot serve /v1/audio/speech: provider kind gemini makes speech as wav or pcm only, not mp3');
    // In a combo, the mp3 request skips the Gemini target and the OpenAI one answers.
    const combo = await gw.req('POST', '/v1/audio/speech', { model: 'wav-speaker', input: 'x', voice: 'alloy' });
    expect(combo.status).toBe(200);
    expect(combo.headers['x-gateway-decision']).toMatch(/provider=oa/);
  });

  it('a route Gemini does not have is a 400 naming it', async () => {
    const r = await gw.req('POST', '/v1/moderations', { model: 'gm/gmod', input: 'x' });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toBe('model gm/gmod cannot serve /v1/moderations: provider kind gemini has no moderations endpoint');
  });
});

describe('speech', () => {
  it('the OpenAI SDK gets the audio bytes back, streamed with their content type', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.audio.speech.create({ model: 'oa/tts-1', input: 'hello world', voice: 'alloy', response_format: 'wav' });
    expect(r.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(bytes.equals(speechBytes('hello world'))).toBe(true);
    expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'tts-1', input: 'hello world', voice: 'alloy' });
  });

  it('bad bodies are 400s; a kind without speech is named; a failed first target falls back before any byte', async () => {
    const long = await gw.req('POST', '/v1/audio/speech', { model: 'oa/tts-1', input: 'x'.repeat(4097), voice: 'alloy' });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toMatch(/at most 4096 characters/);
    const noVoice = await gw.req('POST', '/v1/audio/speech', { model: 'oa/tts-1', input: 'x' });
    expect(noVoice.json.error.message).toMatch(/body\/voice is required/);
    const an = await gw.req('POST', '/v1/audio/speech', { model: 'an/rr2', input: 'x', voice: 'a' });
    expect(an.json.error.message).toBe('model an/rr2 cannot serve /v1/audio/speech: provider kind anthropic has no speech endpoint');
    mock.enqueue({ status: 500 });
    const r = await gw.req('POST', '/v1/audio/speech', { model: 'speaker', input: 'again', voice: 'alloy' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('audio/mpeg');
    expect(r.headers['x-gateway-fallback-attempts']).toBe('1');
    expect(r.headers['x-gateway-decision']).toMatch(/provider=ob/);
    // The provider-scoped route.
    expect((await gw.req('POST', '/v1/providers/oa/audio/speech', { model: 'tts-1', input: 'x', voice: 'alloy' })).status).toBe(200);
  });
});

describe('transcriptions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-audio-'));
  const wav = join(dir, 'hello.wav');
  writeFileSync(wav, 'RIFF' + 'x'.repeat(200_000) + 'WAVE');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the OpenAI SDK uploads a file; the gateway streams it on and returns the answer in each format', async () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: `${gw.trustedUrl}/v1` });
    const r = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'oa/whisper-1', language: 'en' });
    expect(r.text).toBe('transcript of hello.wav (200008 bytes) by whisper-1 in en');
    expect(mock.lastForm!.fields).toMatchObject({ model: 'whisper-1', language: 'en' });
    const text = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'oa/whisper-1', response_format: 'text' });
    expect(String(text).trim()).toBe('transcript of hello.wav (200008 bytes) by whisper-1');
    const srt = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'oa/whisper-1', response_format: 'srt' });
    expect(String(srt)).toMatch(/^1\n00:00:00,000 --> 00:00:01,000\ntranscript of hello\.wav/);
    // The temp file is gone once answered.
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'tmp'))).toEqual([]);
  });

  it('refuses an unknown format, a missing model, a file over 25 MiB and a truncated body, leaving nothing behind', async () => {
    const post = async (form: FormData) => {
      const res = await fetch(`${gw.trustedUrl}/v1/audio/transcriptions`, { method: 'POST', body: form });
      return { status: res.status, json: (await res.json()) as { error: { message: string } } };
    };
    const f = (name: string, data: string | Uint8Array, model?: string) => {
      const form = new FormData();
      if (model) form.append('model', model);
      form.append('file', new Blob([data]), name);
      return form;
    };
    const exe = await post(f('tool.exe', 'MZ', 'oa/whisper-1'));
    expect(exe.status).toBe(400);
    expect(exe.json.error.message).toMatch(/unsupported audio format "exe"/);
    const noModel = await post(f('a.mp3', 'ID3'));
    expect(noModel.json.error.message).toBe('model is required (a form field)');
    const big = await post(f('big.mp3', new Uint8Array(25 * 1024 * 1024 + 1), 'oa/whisper-1'));
    expect(big.status).toBe(413);
    const truncated = await fetch(`${gw.trustedUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX' },
      body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\nhalf a file',
    });
    expect(truncated.status).toBe(400);
    expect(readdirSync(join(gw.dir, 'uploads', 'gateway', 'tmp'))).toEqual([]);
  });
});

describe('video and music', () => {
  it('generate through the gateway; a music model cannot make video', async () => {
    const v = await gw.req('POST', '/v1/videos/generations', { model: 'oa/veo', prompt: 'waves', seconds: 4 });
    expect(v.status, v.text).toBe(200);
    expect(v.json.data[0].url).toBe('https://media.mock/video.mp4');
    expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'veo', prompt: 'waves', seconds: 4 });
    const m = await gw.req('POST', '/v1/music/generations', { model: 'oa/lyria', prompt: 'calm piano' });
    expect(m.json.data[0].url).toBe('https://media.mock/audio.mp3');
    const wrong = await gw.req('POST', '/v1/videos/generations', { model: 'oa/lyria', prompt: 'x' });
    expect(wrong.json.error.message).toBe('model oa/lyria cannot serve /v1/videos/generations: it is declared as a music model');
  });
});

describe('media prices', () => {
  const cost = (r: { headers: Record<string, unknown> }) => Number(r.headers['x-gateway-response-cost']);
  it('images by size/quality, then size, then default; speech by character; video by second; music by request', async () => {
    const high = await gw.req('POST', '/v1/images/generations', { model: 'oa/gpt-image-1', prompt: 'p', n: 2, size: '1024x1024', quality: 'high' });
    expect(cost(high)).toBeCloseTo(0.34, 10);
    const sized = await gw.req('POST', '/v1/images/generations', { model: 'oa/gpt-image-1', prompt: 'p', n: 3, size: '1024x1024' });
    expect(cost(sized)).toBeCloseTo(0.12, 10);
    const other = await gw.req('POST', '/v1/images/generations', { model: 'oa/gpt-image-1', prompt: 'p', size: '512x512' });
    expect(cost(other)).toBeCloseTo(0.01, 10);
    const speech = await gw.req('POST', '/v1/audio/speech', { model: 'oa/tts-1', input: 'x'.repeat(1000), voice: 'alloy' });
    expect(cost(speech)).toBeCloseTo(0.015, 10);
    const video = await gw.req('POST', '/v1/videos/generations', { model: 'oa/veo', prompt: 'waves', seconds: 4 });
    expect(cost(video)).toBeCloseTo(2, 10);
    const music = await gw.req('POST', '/v1/music/generations', { model: 'oa/lyria', prompt: 'calm' });
    expect(cost(music)).toBeCloseTo(0.06, 10);
    // Request-log rows carry the modality, and usage history groups by it.
    const rows = (await gw.req('GET', '/api/usage/request-logs?limit=6')).json;
    const list = rows.items as { modality: string }[];
    expect(list.map((r) => r.modality)).toEqual(['music', 'video', 'speech', 'image', 'image', 'image']);
    const hist = (await gw.req('GET', '/api/usage/history?groupBy=modality')).json;
    const music$ = hist.history.find((b: { group: string }) => b.group === 'music');
    expect(music$.cost).toBeCloseTo(0.12, 10); // this request and the one of 'video and music' above
  });

  it('transcriptions by the seconds verbose_json reports; rerank by search unit on top of its tokens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-audio-'));
    try {
      writeFileSync(join(dir, 'a.wav'), 'RIFFxxxxWAVE');
      const form = new FormData();
      form.append('model', 'oa/whisper-1');
      form.append('response_format', 'verbose_json');
      form.append('file', new Blob(['RIFFxxxxWAVE']), 'a.wav');
      const res = await fetch(`${gw.trustedUrl}/v1/audio/transcriptions`, { method: 'POST', body: form });
      expect(((await res.json()) as { duration: number }).duration).toBe(12.5);
      expect(Number(res.headers.get('x-gateway-response-cost'))).toBeCloseTo(0.00125, 10);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const docs = Array.from({ length: 150 }, (_, i) => `doc ${i}`);
    const r = await gw.req('POST', '/v1/rerank', { model: 'oa/rr', query: 'doc', documents: docs });
    expect(r.status, r.text).toBe(200);
    const tokens = Number(r.headers['x-gateway-tokens-in'] ?? 0);
    // 150 documents are two search units; the tokens the answer reports are priced as before.
    expect(cost(r)).toBeCloseTo(0.004 + (tokens * 2) / 1e6, 10);
  });
});

describe('rerank', () => {
  it('reranks documents, best first, with top_n and return_documents; cost from the usage', async () => {
    const r = await gw.req('POST', '/v1/rerank', { model: 'oa/rr', query: 'sqlite wal mode', documents: ['cats and dogs', 'SQLite WAL mode explained', 'wal street'], top_n: 2, return_documents: true });
    expect(r.status, r.text).toBe(200);
    expect(r.json.model).toBe('oa/rr');
    expect(r.json.results.map((x: { index: number }) => x.index)).toEqual([1, 2]);
    expect(r.json.results[0].document.text).toBe('SQLite WAL mode explained');
    expect(Number(r.headers['x-gateway-response-cost'])).toBeGreaterThan(0);
  });

  it('a combo falls back to the next target when the first fails', async () => {
    mock.enqueue({ status: 503 });
    const r = await gw.req('POST', '/v1/rerank', { model: 'ranker', query: 'q', documents: ['a', 'q b'] });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-fallback-attempts']).toBe('1');
    expect(r.headers['x-gateway-decision']).toMatch(/provider=ob/);
  });

  it('a provider kind without a rerank endpoint is named in the 400; missing fields are 400', async () => {
    const an = await gw.req('POST', '/v1/rerank', { model: 'an/rr2', query: 'q', documents: ['a'] });
    expect(an.status).toBe(400);
    expect(an.json.error.message).toBe('model an/rr2 cannot serve /v1/rerank: provider kind anthropic has no rerank endpoint');
    for (const [body, msg] of [
      [{ query: 'q', documents: ['a'] }, /body\/model is required/],
      [{ model: 'oa/rr', documents: ['a'] }, /body\/query is required/],
      [{ model: 'oa/rr', query: 'q', documents: [] }, /body\/documents must be a non-empty array/],
      [{ model: 'oa/rr', query: 'q', documents: ['a'], top_n: 0 }, /body\/top_n must be a positive integer/],
    ] as const) {
      const r = await gw.req('POST', '/v1/rerank', body);
      expect(r.status).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    // The provider-scoped route too.
    expect((await gw.req('POST', '/v1/providers/ob/rerank', { model: 'rr', query: 'q', documents: ['q'] })).status).toBe(200);
  });
});
