/**
 * Bad input gets a clear 400, never a crash: random mutations of valid bodies go through every
 * format's parser, and whatever is accepted must also encode for every provider kind. Bounded count,
 * fixed seed.
 */
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.js';
import { Egress } from '../../src/egress/index.js';
import type { ClientFormat } from '../../src/gateway/canonical.js';
import { parseRequest } from '../../src/gateway/translate/index.js';
import { parseEmbeddingsRequest } from '../../src/gateway/embeddings.js';
import { encodeOpenAIRequest } from '../../src/gateway/providers/openai.js';
import { encodeAnthropicRequest } from '../../src/gateway/providers/anthropic.js';
import { encodeGeminiRequest } from '../../src/gateway/providers/gemini.js';
import { encodeOllamaRequest } from '../../src/gateway/providers/ollama.js';

const SEEDS: Record<ClientFormat, unknown> = {
  openai: {
    model: 'm',
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    tool_choice: 'auto',
    temperature: 1,
    stream: true,
  },
  'openai-responses': {
    model: 'm',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c', output: 'r' },
    ],
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    reasoning: { effort: 'low' },
  },
  anthropic: {
    model: 'm',
    max_tokens: 10,
    system: 's',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] },
    ],
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
    thinking: { type: 'enabled', budget_tokens: 2000 },
  },
  gemini: {
    systemInstruction: { parts: [{ text: 's' }] },
    contents: [
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
    ],
    tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT' } }] }],
    generationConfig: { temperature: 1, maxOutputTokens: 5 },
  },
  ollama: {
    model: 'm',
    messages: [
      { role: 'user', content: 'q', images: ['AA'] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: {} } }] },
      { role: 'tool', content: 'r', tool_name: 'f' },
    ],
    options: { temperature: 1 },
  },
};

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WEIRD: unknown[] = [null, undefined, 0, -1, 1.5, 1e309, '', 'x', true, false, [], {}, [null], [{}], { type: 'text' }, { role: 'user' }, 'NaN', [1, 2], { a: { b: {} } }];

function mutate(v: unknown, r: () => number, depth = 0): unknown {
  if (r() < 0.08 || depth > 6) return WEIRD[Math.floor(r() * WEIRD.length)];
  if (Array.isArray(v)) {
    const out = v.map((x) => (r() < 0.3 ? mutate(x, r, depth + 1) : x));
    if (r() < 0.1) out.push(WEIRD[Math.floor(r() * WEIRD.length)]);
    if (r() < 0.1) out.pop();
    return out;
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (r() < 0.05) continue;
      out[k] = r() < 0.3 ? mutate(x, r, depth + 1) : x;
    }
    return out;
  }
  return r() < 0.3 ? WEIRD[Math.floor(r() * WEIRD.length)] : v;
}

describe('parsers never crash on mutated bodies', () => {
  const egress = new Egress({ loopbackOnly: true });
  for (const format of Object.keys(SEEDS) as ClientFormat[]) {
    it(format, async () => {
      const r = rng(42);
      let accepted = 0;
      for (let i = 0; i < 600; i++) {
        const body = mutate(SEEDS[format], r);
        let req;
        try {
          req = parseRequest(format, body, format === 'gemini' ? { model: 'm' } : {});
        } catch (e) {
          if (!(e instanceof HttpError) || e.status !== 400) throw new Error(`${format} parser threw ${String(e)} for ${JSON.stringify(body)}`);
          continue;
        }
        accepted++;
        // Whatever is accepted must encode for every provider kind (images stay inline here).
        encodeOpenAIRequest(req);
        encodeAnthropicRequest(req);
        await encodeGeminiRequest(req, { egress }).catch((e: unknown) => {
          if (!(e instanceof HttpError)) throw e;
        });
        await encodeOllamaRequest(req, { egress }).catch((e: unknown) => {
          if (!(e instanceof HttpError)) throw e;
        });
      }
      expect(accepted).toBeGreaterThan(0);
    });
  }

  it('embeddings', () => {
    const r = rng(7);
    const seed = { model: 'm', input: [{ type: 'text', text: 'a' }, { type: 'image', source: { type: 'base64', data: 'AAAA', media_type: 'image/png' } }], dimensions: 8 };
    for (let i = 0; i < 600; i++) {
      const body = mutate(seed, r);
      try {
        parseEmbeddingsRequest(body);
      } catch (e) {
        if (!(e instanceof HttpError) || e.status !== 400) throw new Error(`embeddings parser threw ${String(e)} for ${JSON.stringify(body)}`);
      }
    }
  });
});
