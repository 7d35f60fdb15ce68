/** The official `@google/genai` package against the gateway's /v1beta routes, for every upstream provider kind. */
import { ApiError, GoogleGenAI, Type } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GW_KEY, lastUpstreamBody, MODELS, PNG, startSdkFixture, UPSTREAM_KINDS, type SdkFixture } from './sdk-fixture.js';

let fx: SdkFixture;
let ai: GoogleGenAI;

beforeAll(async () => {
  fx = await startSdkFixture();
  ai = new GoogleGenAI({ apiKey: GW_KEY, httpOptions: { baseUrl: fx.gw.tcpUrl, apiVersion: 'v1beta' } });
});
afterAll(async () => {
  await fx.close();
});
beforeEach(() => fx.mock.reset());

const contents = [{ role: 'user', parts: [{ text: 'Describe this.' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }];
const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } }] }];

describe.each(UPSTREAM_KINDS)('@google/genai → %s upstream', (kind) => {
  const model = MODELS[kind];

  it('generateContent with systemInstruction and an image', async () => {
    const res = await ai.models.generateContent({ model, contents, config: { systemInstruction: 'SYSTEM-PROMPT', temperature: 0.2 } });
    expect(res.text).toBe(`Hello from ${kind}`);
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
    const sent = lastUpstreamBody(fx.mock, kind);
    expect(sent).toContain('SYSTEM-PROMPT');
    expect(sent).toContain(PNG);
  });

  it('generateContentStream: text chunks and usage', async () => {
    fx.mock.enqueue({ text: 'gemini style stream', usage: { input: 4, output: 6 } });
    const stream = await ai.models.generateContentStream({ model, contents, config: { systemInstruction: 'SYSTEM-PROMPT' } });
    let text = '';
    let last: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe('gemini style stream');
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 4, candidatesTokenCount: 6 });
  });

  it('function calls, non-streaming and streaming', async () => {
    const calls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Kyiv' } },
    ];
    fx.mock.enqueue({ toolCalls: calls });
    const res = await ai.models.generateContent({ model, contents, config: { tools } });
    expect(res.functionCalls?.map((c) => [c.name, c.args])).toEqual(calls.map((c) => [c.name, c.arguments]));

    fx.mock.enqueue({ toolCalls: calls });
    const stream = await ai.models.generateContentStream({ model, contents, config: { tools } });
    const got: [string | undefined, unknown][] = [];
    for await (const chunk of stream) for (const c of chunk.functionCalls ?? []) got.push([c.name, c.args]);
    expect(got).toEqual(calls.map((c) => [c.name, c.arguments]));
  });

  it('a functionResponse turn reaches the upstream', async () => {
    await ai.models.generateContent({
      model,
      config: { tools },
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'TOOL-RESULT-SUNNY' } } }] },
      ],
    });
    expect(lastUpstreamBody(fx.mock, kind)).toContain('TOOL-RESULT-SUNNY');
  });
});

describe('@google/genai errors and extras', () => {
  it('an unknown model is an ApiError 4xx in the Gemini shape', async () => {
    const e = await ai.models.generateContent({ model: 'nope/nothing', contents: 'x' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBeGreaterThanOrEqual(400);
    expect((e as ApiError).status).toBeLessThan(500);
  });

  it('a body the gateway cannot serve is a 400', async () => {
    const e = await ai.models.generateContent({ model: MODELS.gemini, contents: 'x', config: { candidateCount: 2 } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
  });

  it('a stream cut off mid-way surfaces as an error chunk', async () => {
    fx.mock.enqueue({ text: 'abcdefghijkl', stream: 'truncated' }, 'openai');
    const stream = await ai.models.generateContentStream({ model: MODELS.openai, contents: 'x' });
    let text = '';
    const e = await (async () => {
      for await (const c of stream) text += c.text ?? '';
    })().catch((x: unknown) => x);
    expect(text).toBe('abcd');
    expect(e).toBeInstanceOf(Error);
  });

  it('counts tokens', async () => {
    const r = await ai.models.countTokens({ model: MODELS.gemini, contents: 'Hello there, how are you today?' });
    expect(r.totalTokens).toBeGreaterThan(3);
  });

  it('lists models', async () => {
    const pager = await ai.models.list();
    const names: string[] = [];
    for await (const m of pager) names.push(m.name ?? '');
    expect(names).toEqual(expect.arrayContaining(Object.values(MODELS).map((id) => `models/${id}`)));
  });
});
