/**
 * OpenAI and Ollama stream decoders read the body to its end after the terminator ([DONE],
 * done:true) instead of abandoning it mid-read (which made Node report an AbortError on every stream).
 */
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { decodeOpenAIStream } from '../../src/gateway/providers/openai.js';
import { decodeOllamaStream } from '../../src/gateway/providers/ollama.js';
import type { UpstreamHttpResponse } from '../../src/gateway/providers/http.js';

function body(parts: string[]): { res: UpstreamHttpResponse; errors: unknown[]; stream: Readable } {
  const stream = Readable.from(parts.map((p) => Buffer.from(p)), { objectMode: false });
  const errors: unknown[] = [];
  stream.on('error', (e) => errors.push(e));
  return { res: { status: 200, headers: {}, body: stream as unknown as UpstreamHttpResponse['body'] }, errors, stream };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('stream terminators', () => {
  it('OpenAI: [DONE] ends the stream and the body is drained, not destroyed', async () => {
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const { res, errors, stream } = body([
      chunk({ id: 'c1', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }),
      chunk({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      'data: [DONE]\n\n',
      chunk({ id: 'c1', choices: [{ index: 0, delta: { content: 'after the end' }, finish_reason: null }] }),
    ]);
    const chunks = await collect(decodeOpenAIStream(res));
    expect(chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text)).toEqual(['hi']);
    expect(chunks.at(-1)).toEqual({ type: 'finish', stopReason: 'stop' });
    expect(stream.readableEnded).toBe(true);
    expect(stream.destroyed).toBe(true); // auto-destroyed after a normal end
    expect(errors).toEqual([]);
  });

  it('Ollama: done:true ends the stream and the body is drained', async () => {
    const { res, errors, stream } = body([
      `${JSON.stringify({ model: 'x', message: { role: 'assistant', content: 'yo' }, done: false })}\n`,
      `${JSON.stringify({ model: 'x', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 1 })}\n`,
      `${JSON.stringify({ model: 'x', message: { role: 'assistant', content: 'ignored' }, done: false })}\n`,
    ]);
    const chunks = await collect(decodeOllamaStream(res));
    expect(chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text)).toEqual(['yo']);
    expect(stream.readableEnded).toBe(true);
    expect(errors).toEqual([]);
  });
});
